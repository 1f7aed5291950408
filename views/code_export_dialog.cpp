#include "code_export_dialog.h"

#include "code_highlighter.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontDatabase>
#include <QFormLayout>
#include <QFutureWatcher>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QTabWidget>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

namespace ramiel::studio {

CodegenResult exportCode(const PlannedModel& analysis, CodeLanguage language, const QString& dir)
{
    const PreparedModel& p = *analysis.prepared;
    CodegenRequest request;
    request.model = &p.model;
    request.topo = &p.topo;
    request.schedule = &analysis.plan.schedule;
    request.language = language;
    request.outputDir = dir.toStdString();
    request.bound = analysis.bound;
    request.command = "Ramiel Studio: " + QFileInfo(QString::fromStdString(p.path)).fileName().toStdString() + ", " +
                      analysis.settings.algorithm + ", P=" + std::to_string(analysis.settings.workers) +
                      ", B=" + std::to_string(analysis.settings.batch) + ", d=" +
                      std::to_string(analysis.settings.degree) + ", " + passes::passesRunText(p.passes);
    return generateCode(request);
}

namespace {

struct Preview {
    QList<QPair<QString, QString>> files;  // name, text
    QString error;
};

}  // namespace

CodeExportDialog::CodeExportDialog(std::shared_ptr<const PlannedModel> analysis, QWidget* parent)
    : QDialog(parent), analysis_(std::move(analysis)), language_(new QComboBox(this)), folder_(new QLineEdit(this)),
      preview_(new QTabWidget(this)), status_(new QLabel(this)), exportButton_(new QPushButton(tr("Export"), this))
{
    setWindowTitle(tr("Export Code"));
    resize(980, 720);
    language_->addItem(tr("Python + PyTorch"), int(CodeLanguage::Python));
    language_->addItem(tr("C++ / libtorch"), int(CodeLanguage::Cpp));
    const QString base = QFileInfo(QString::fromStdString(analysis_->prepared->path)).completeBaseName();
    folder_->setText(QDir::home().filePath(base + QStringLiteral("-parallel")));
    auto* browse = new QPushButton(tr("Browse..."), this);
    auto* folderRow = new QHBoxLayout;
    folderRow->addWidget(folder_, 1);
    folderRow->addWidget(browse);
    auto* form = new QFormLayout;
    form->addRow(tr("Language"), language_);
    form->addRow(tr("Folder"), folderRow);
    const Schedule& s = analysis_->plan.schedule;
    form->addRow(tr("Schedule"), new QLabel(tr("%1, %2 clusters, batch %3, degree %4")
                                                 .arg(QString::fromStdString(s.algorithm))
                                                 .arg(s.clusters.size())
                                                 .arg(s.batch)
                                                 .arg(s.degree),
                                             this));
    status_->setWordWrap(true);
    status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
    buttons->addButton(exportButton_, QDialogButtonBox::AcceptRole);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(preview_, 1);
    layout->addWidget(status_);
    layout->addWidget(buttons);

    connect(browse, &QPushButton::clicked, this, [this] {
        const QString dir = QFileDialog::getExistingDirectory(this, tr("Export Into"), folder_->text());
        if (!dir.isEmpty())
            folder_->setText(dir);
    });
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(exportButton_, &QPushButton::clicked, this, &CodeExportDialog::exportToFolder);
    connect(language_, &QComboBox::currentIndexChanged, this, &CodeExportDialog::refreshPreview);
    refreshPreview();
}

CodeLanguage CodeExportDialog::language() const { return CodeLanguage(language_->currentData().toInt()); }

void CodeExportDialog::refreshPreview()
{
    const int generation = ++generation_;
    preview_->clear();
    status_->setText(tr("Generating the preview..."));
    auto analysis = analysis_;
    const CodeLanguage lang = language();
    auto* watcher = new QFutureWatcher<Preview>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, generation] {
        watcher->deleteLater();
        if (generation != generation_)
            return;
        const Preview p = watcher->result();
        if (!p.error.isEmpty()) {
            status_->setText(tr("Cannot generate code: %1").arg(p.error));
            exportButton_->setEnabled(false);
            Q_EMIT previewReady();
            return;
        }
        exportButton_->setEnabled(true);
        const QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
        for (const auto& [name, text] : p.files) {
            auto* edit = new QPlainTextEdit(preview_);
            edit->setReadOnly(true);
            edit->setFont(mono);
            edit->setLineWrapMode(QPlainTextEdit::NoWrap);
            edit->setPlainText(text);
            const auto lang = name.endsWith(".py")    ? CodeHighlighter::Language::Python
                              : name.endsWith(".cpp") ? CodeHighlighter::Language::Cpp
                                                      : CodeHighlighter::Language::CMake;
            new CodeHighlighter(lang, edit->document());
            preview_->addTab(edit, name);
        }
        status_->setText(tr("Preview of the generated files (the weights go to weights.bin beside them)."));
        Q_EMIT previewReady();
    });
    watcher->setFuture(QtConcurrent::run([analysis, lang] {
        Preview p;
        QTemporaryDir dir;
        try {
            const CodegenResult r = exportCode(*analysis, lang, dir.path());
            for (const std::string& file : r.files) {
                const QString path = QString::fromStdString(file);
                if (path.endsWith(".bin"))
                    continue;
                QFile f(path);
                if (f.open(QIODevice::ReadOnly))
                    p.files.append({QFileInfo(path).fileName(), QString::fromUtf8(f.readAll())});
            }
        } catch (const std::exception& e) {
            p.error = QString::fromStdString(e.what());
        }
        return p;
    }));
}

void CodeExportDialog::exportToFolder()
{
    const QString dir = folder_->text().trimmed();
    if (dir.isEmpty())
        return;
    exportButton_->setEnabled(false);
    status_->setText(tr("Writing %1...").arg(dir));
    auto analysis = analysis_;
    const CodeLanguage lang = language();
    auto* watcher = new QFutureWatcher<QString>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, dir, lang] {
        watcher->deleteLater();
        exportButton_->setEnabled(true);
        const QString error = watcher->result();
        if (!error.isEmpty()) {
            status_->setText(tr("Export failed: %1").arg(error));
            Q_EMIT exported(false, error);
            return;
        }
        const QString run = lang == CodeLanguage::Python
                                ? QStringLiteral("/usr/bin/python3 %1/run.py").arg(dir)
                                : QStringLiteral("cmake -S %1 -B %1/build && cmake --build %1/build && %1/build/model").arg(dir);
        status_->setText(tr("Wrote %1. Run it with: %2").arg(dir, run));
        Q_EMIT exported(true, dir);
    });
    watcher->setFuture(QtConcurrent::run([analysis, lang, dir]() -> QString {
        try {
            exportCode(*analysis, lang, dir);
            return {};
        } catch (const std::exception& e) {
            return QString::fromStdString(e.what());
        }
    }));
}

}  // namespace ramiel::studio
