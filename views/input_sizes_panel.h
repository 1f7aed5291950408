// The sizes of the model's inputs: each graph input with its element type and
// dimensions, symbolic ones by name ("Nx3xHxW"), editable. Apply reads the
// model again with the sizes given, so shape inference, the passes, the costs
// and the plan all follow; until every size is known, figures that need them
// say "unknown". Each input can also take its data from a NumPy file (Data...),
// whose sizes it then shows: Run, Tune and measured costs read it instead of
// random data (a detector's image).
#pragma once

#include "studio_session.h"

#include <QWidget>

#include <string>
#include <utility>
#include <vector>

class QLabel;
class QLineEdit;
class QPushButton;
class QFormLayout;

namespace ramiel::studio {

class InputSizesPanel : public QWidget {
    Q_OBJECT
public:
    explicit InputSizesPanel(StudioSession* session, QWidget* parent = nullptr);

    // The editor of an input by its name (null when there is none).
    QLineEdit* sizesEdit(const QString& input) const;
    QPushButton* applyButton() const { return apply_; }
    QLabel* statusLabel() const { return status_; }

    QPushButton* dataButton(const QString& input) const;

    // "NAME=d1,d2,..." for every input whose text is a full list of sizes that
    // differs from what the model says, or throws Error(Usage) naming the input.
    std::vector<std::string> shapeSpecs() const;
    // "NAME=FILE.npy" for every input given a file.
    std::vector<std::string> fileSpecs() const;
    // Gives `input` its data from the .npy file at `path` (until Apply, only here): its sizes
    // fill the input's row. False, with the reason in the status line, where it cannot be read.
    bool setInputFile(const QString& input, const QString& path);

public Q_SLOTS:
    void apply();
    void reset();

private:
    void showInputs();

    StudioSession* session_;
    QFormLayout* form_;
    QLabel* status_;
    QPushButton* apply_;
    QPushButton* reset_;
    std::vector<std::pair<std::string, QLineEdit*>> edits_;  // by input name
    std::vector<std::string> shown_;                          // the dims text each edit started with
    std::vector<QPushButton*> dataButtons_;                   // by input, as edits_
    std::vector<std::string> files_;                          // by input: its .npy file, or empty
};

}  // namespace ramiel::studio
