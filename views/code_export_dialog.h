// Export > Code: generated Python+PyTorch or C++/libtorch for the current
// schedule, previewed with syntax highlighting, written into a folder.
// Generation runs off the UI thread; an unwritable folder gives a clear error.
#pragma once

#include "studio_session.h"

#include "core/codegen/codegen.h"

#include <QDialog>
#include <QTemporaryDir>

#include <memory>

class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QTabWidget;

namespace ramiel::studio {

// Writes the code for `analysis` into `dir` (any thread). Throws Error.
CodegenResult exportCode(const PlannedModel& analysis, CodeLanguage language, const QString& dir);

class CodeExportDialog : public QDialog {
    Q_OBJECT
public:
    CodeExportDialog(std::shared_ptr<const PlannedModel> analysis, QWidget* parent = nullptr);

    QComboBox* languageBox() const { return language_; }
    QLineEdit* folderEdit() const { return folder_; }
    QTabWidget* preview() const { return preview_; }
    QLabel* status() const { return status_; }

public Q_SLOTS:
    void exportToFolder();

Q_SIGNALS:
    void previewReady();
    void exported(bool ok, const QString& message);

private:
    void refreshPreview();
    CodeLanguage language() const;

    std::shared_ptr<const PlannedModel> analysis_;
    QComboBox* language_;
    QLineEdit* folder_;
    QTabWidget* preview_;
    QLabel* status_;
    QPushButton* exportButton_;
    int generation_ = 0;
};

}  // namespace ramiel::studio
