#include "input_sizes_panel.h"

#include "core/util/error.h"
#include "core/util/npy.h"

#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QVBoxLayout>

namespace ramiel::studio {

namespace {

// "1x3x224x224", symbolic dimensions by name, unknown ones as "?".
QString dimsText(const TensorType& type)
{
    if (!type.shape)
        return QStringLiteral("?");
    QStringList dims;
    for (const Dim& d : type.shape->dims)
        dims << (d.isKnown() ? QString::number(d.value) : d.symbol.empty() ? QStringLiteral("?")
                                                                          : QString::fromStdString(d.symbol));
    return dims.join('x');
}

}  // namespace

InputSizesPanel::InputSizesPanel(StudioSession* session, QWidget* parent)
    : QWidget(parent), session_(session), form_(new QFormLayout), status_(new QLabel(this)),
      apply_(new QPushButton(tr("Apply"), this)), reset_(new QPushButton(tr("As in the File"), this))
{
    status_->setWordWrap(true);
    apply_->setToolTip(tr("Read the model again with these sizes: shape inference, passes, costs and the plan follow"));
    reset_->setToolTip(tr("Read the model with the sizes its file declares, and run it on random data"));
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(apply_);
    buttons->addWidget(reset_);
    buttons->addStretch();
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form_);
    layout->addLayout(buttons);
    layout->addWidget(status_);
    layout->addStretch();
    connect(apply_, &QPushButton::clicked, this, &InputSizesPanel::apply);
    connect(reset_, &QPushButton::clicked, this, &InputSizesPanel::reset);
    connect(session_, &StudioSession::modelChanged, this, &InputSizesPanel::showInputs);
    showInputs();
}

void InputSizesPanel::showInputs()
{
    while (form_->rowCount() > 0)
        form_->removeRow(0);
    edits_.clear();
    shown_.clear();
    dataButtons_.clear();
    files_.clear();
    auto p = session_->prepared();
    apply_->setEnabled(bool(p));
    reset_->setEnabled(p && (!session_->inputShapes().empty() || !session_->inputFiles().empty()));
    if (!p) {
        status_->setText(tr("Open a model to see and set its input sizes."));
        return;
    }
    const Model& source = *p->source;
    const Graph& g = source.graph;
    int unknown = 0;
    QStringList oneSample;
    for (ValueId v : g.inputs()) {
        const Value& value = g.value(v);
        if (value.isConstant())
            continue;
        auto* edit = new QLineEdit(dimsText(value.type), this);
        const bool known = value.type.shape && value.type.shape->isFullyKnown();
        unknown += known ? 0 : 1;
        edit->setToolTip(tr("%1 %2: sizes separated by x or commas, e.g. 1x3x640x640")
                             .arg(QString::fromStdString(dataTypeName(value.type.dtype)),
                                  QString::fromStdString(value.name)));
        edit->setPlaceholderText(tr("e.g. 1x3x224x224"));
        connect(edit, &QLineEdit::returnPressed, this, &InputSizesPanel::apply);
        auto* label = new QLabel(QString::fromStdString(value.name).toHtmlEscaped(), this);
        label->setToolTip(QString::fromStdString(value.type.toString()));
        if (const OneSampleInput* s = source.oneSampleInput(value.name)) {
            oneSample << QString::fromStdString(value.name).toHtmlEscaped();  // names come from the file
            label->setToolTip(tr("%1: the file's batch%2 is symbolic, read as one sample")
                                  .arg(QString::fromStdString(value.type.toString()).toHtmlEscaped(),
                                       s->batchSymbol.empty()
                                           ? QString()
                                           : " '" + QString::fromStdString(s->batchSymbol).toHtmlEscaped() + "'"));
        }
        auto* data = new QPushButton(tr("Data..."), this);
        data->setToolTip(tr("Run, Tune and measured costs read %1 from a NumPy .npy file instead of random data")
                             .arg(QString::fromStdString(value.name).toHtmlEscaped()));
        const QString input = QString::fromStdString(value.name);
        connect(data, &QPushButton::clicked, this, [this, input] {
            const QString path = QFileDialog::getOpenFileName(this, tr("Data for %1").arg(input), QString(),
                                                              tr("NumPy arrays (*.npy)"));
            if (!path.isEmpty())
                setInputFile(input, path);
        });
        auto* row = new QHBoxLayout;
        row->addWidget(edit, 1);
        row->addWidget(data);
        form_->addRow(label, row);
        edits_.emplace_back(value.name, edit);
        shown_.push_back(edit->text().toStdString());
        dataButtons_.push_back(data);
        files_.emplace_back();
        for (const std::string& spec : session_->inputFiles())
            if (spec.rfind(value.name + "=", 0) == 0) {
                files_.back() = spec.substr(value.name.size() + 1);
                data->setText(QFileInfo(QString::fromStdString(files_.back())).fileName());
                data->setToolTip(QString::fromStdString(files_.back()).toHtmlEscaped());
            }
    }
    if (unknown > 0)
        status_->setText(tr("%n input(s) with sizes that are not known: node costs, the plan's figures and Run "
                            "need them. Give every size and Apply.",
                            "", unknown));
    else if (!oneSample.isEmpty())
        status_->setText(tr("The file leaves the batch of %1 symbolic: read as one sample. Run and the plan's "
                            "batch B count such samples; edit the sizes for another sample.")
                             .arg(oneSample.join(", ")));
    else if (!session_->inputShapes().empty())
        status_->setText(tr("Sizes set here (remembered for this model); the file declares others."));
    else
        status_->setText(tr("Every size is known, as the file declares it."));
    QStringList fromFiles;
    for (size_t k = 0; k < edits_.size(); ++k)
        if (!files_[k].empty())
            fromFiles << tr("%1 from %2").arg(QString::fromStdString(edits_[k].first).toHtmlEscaped(),
                                            QFileInfo(QString::fromStdString(files_[k])).fileName().toHtmlEscaped());
    if (!fromFiles.isEmpty())
        status_->setText(status_->text() + " " + tr("Run, Tune and measured costs read %1; random data for the rest.")
                                                     .arg(fromFiles.join(", ")));
}

QPushButton* InputSizesPanel::dataButton(const QString& input) const
{
    for (size_t k = 0; k < edits_.size(); ++k)
        if (QString::fromStdString(edits_[k].first) == input)
            return dataButtons_[k];
    return nullptr;
}

std::vector<std::string> InputSizesPanel::fileSpecs() const
{
    std::vector<std::string> specs;
    for (size_t k = 0; k < edits_.size(); ++k)
        if (!files_[k].empty())
            specs.push_back(edits_[k].first + "=" + files_[k]);
    return specs;
}

bool InputSizesPanel::setInputFile(const QString& input, const QString& path)
{
    for (size_t k = 0; k < edits_.size(); ++k) {
        if (QString::fromStdString(edits_[k].first) != input)
            continue;
        try {
            const NpyHeader t = readNpyHeader(path.toStdString());
            QStringList dims;
            for (int64_t d : t.dims)
                dims << QString::number(d);
            edits_[k].second->setText(dims.join('x'));
            files_[k] = path.toStdString();
            dataButtons_[k]->setText(QFileInfo(path).fileName());
            dataButtons_[k]->setToolTip(path.toHtmlEscaped());
            status_->setText(tr("%1 takes its data from %2 (%3): Apply to read the model so.")
                                 .arg(input.toHtmlEscaped(), QFileInfo(path).fileName().toHtmlEscaped(),
                                      QString::fromStdString(dataTypeName(t.dtype))));
            return true;
        } catch (const Error& e) {
            status_->setText(QString::fromStdString(e.what()).toHtmlEscaped());
            return false;
        }
    }
    return false;
}

QLineEdit* InputSizesPanel::sizesEdit(const QString& input) const
{
    for (const auto& [name, edit] : edits_)
        if (QString::fromStdString(name) == input)
            return edit;
    return nullptr;
}

std::vector<std::string> InputSizesPanel::shapeSpecs() const
{
    std::vector<std::string> specs;
    // The sizes the model was read with stay unless edited.
    for (const std::string& s : session_->inputShapes()) {
        const std::string name = s.substr(0, s.rfind('='));
        bool edited = false;
        for (size_t k = 0; k < edits_.size(); ++k)
            edited |= edits_[k].first == name && edits_[k].second->text().toStdString() != shown_[k];
        if (!edited)
            specs.push_back(s);
    }
    static const QRegularExpression sizes(QStringLiteral("^\\s*[0-9]+(\\s*[x,]\\s*[0-9]+)*\\s*$"));
    for (size_t k = 0; k < edits_.size(); ++k) {
        const QString text = edits_[k].second->text();
        if (text.toStdString() == shown_[k])
            continue;
        if (!sizes.match(text).hasMatch())
            throw Error(ErrorKind::Usage, {}, "input '" + edits_[k].first + "': '" + text.toStdString() +
                                                  "' is not a list of sizes (e.g. 1x3x224x224)");
        QStringList dims = text.split(QRegularExpression(QStringLiteral("[x,]")));
        for (QString& d : dims) {
            d = d.trimmed();
            if (d.toLongLong() <= 0)
                throw Error(ErrorKind::Usage, {}, "input '" + edits_[k].first + "': every size must be positive");
        }
        specs.push_back(edits_[k].first + "=" + dims.join(',').toStdString());
    }
    return specs;
}

void InputSizesPanel::apply()
{
    try {
        const std::vector<std::string> specs = shapeSpecs();
        status_->setText(tr("Reading the model with the sizes given..."));
        session_->setInputs(specs, fileSpecs());
    } catch (const Error& e) {
        status_->setText(QString::fromStdString(e.message()).toHtmlEscaped());
    }
}

void InputSizesPanel::reset() { session_->setInputs({}, {}); }

}  // namespace ramiel::studio
