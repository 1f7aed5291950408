// The sizes of the model's inputs: each graph input with its element type and
// dimensions, symbolic ones by name ("Nx3xHxW"), editable. Apply reads the
// model again with the sizes given, so shape inference, the passes, the costs
// and the plan all follow; until every size is known, figures that need them
// say "unknown".
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

    // "NAME=d1,d2,..." for every input whose text is a full list of sizes that
    // differs from what the model says, or throws Error(Usage) naming the input.
    std::vector<std::string> shapeSpecs() const;

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
};

}  // namespace ramiel::studio
