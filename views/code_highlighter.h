// Syntax highlighting for the generated-code preview: keywords, strings,
// comments and numbers of Python or C++.
#pragma once

#include <QRegularExpression>
#include <QSyntaxHighlighter>
#include <QTextCharFormat>
#include <QVector>

namespace ramiel::studio {

class CodeHighlighter : public QSyntaxHighlighter {
    Q_OBJECT
public:
    enum class Language { Python, Cpp, CMake };
    CodeHighlighter(Language language, QTextDocument* document);

protected:
    void highlightBlock(const QString& text) override;

private:
    struct Rule {
        QRegularExpression pattern;
        QTextCharFormat format;
    };
    QVector<Rule> rules_;
    Language language_;
    QTextCharFormat comment_;
};

}  // namespace ramiel::studio
