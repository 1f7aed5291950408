#include "code_highlighter.h"

#include "palette.h"

#include <QColor>
#include <QFont>
#include <QGuiApplication>

namespace ramiel::studio {

CodeHighlighter::CodeHighlighter(Language language, QTextDocument* document)
    : QSyntaxHighlighter(document), language_(language)
{
    // Colors that read on the palette the dialog opens with.
    const bool dark = isDark(QGuiApplication::palette());
    QTextCharFormat keyword;
    keyword.setForeground(dark ? QColor(0x6c, 0xa8, 0xff) : QColor(0x2f, 0x5f, 0xb3));
    keyword.setFontWeight(QFont::Bold);
    QTextCharFormat string;
    string.setForeground(dark ? QColor(0x7e, 0xc8, 0x7e) : QColor(0x2e, 0x8b, 0x3a));
    QTextCharFormat number;
    number.setForeground(dark ? QColor(0xe0, 0xa0, 0x60) : QColor(0xa3, 0x4e, 0x00));
    QTextCharFormat call;
    call.setForeground(dark ? QColor(0xc4, 0x9e, 0xe8) : QColor(0x7a, 0x3e, 0x9d));
    comment_.setForeground(dark ? QColor(0x8c, 0x8c, 0x8c) : QColor(0x80, 0x80, 0x80));
    comment_.setFontItalic(true);

    QString words;
    if (language == Language::Python)
        words = QStringLiteral("and|as|assert|break|class|continue|def|del|elif|else|except|False|finally|for|from|"
                               "global|if|import|in|is|lambda|None|nonlocal|not|or|pass|raise|return|True|try|while|"
                               "with|yield");
    else if (language == Language::Cpp)
        words = QStringLiteral("auto|bool|break|case|catch|class|const|constexpr|continue|double|else|enum|false|for|"
                               "if|int|int64_t|namespace|nullptr|return|size_t|static|std|struct|switch|template|"
                               "throw|true|try|using|void|while|#include|#pragma");
    else
        words = QStringLiteral("cmake_minimum_required|project|find_package|add_executable|target_link_libraries|"
                               "set|set_property|target_compile_options|REQUIRED|PRIVATE|PUBLIC");
    rules_.append({QRegularExpression(QStringLiteral("\\b[A-Za-z_][A-Za-z0-9_]*(?=\\()")), call});
    rules_.append({QRegularExpression(QStringLiteral("(?<![\\w#])(") + words + QStringLiteral(")\\b")), keyword});
    rules_.append({QRegularExpression(QStringLiteral("\\b[0-9]+(\\.[0-9]*)?([eE][-+]?[0-9]+)?\\b")), number});
    rules_.append({QRegularExpression(QStringLiteral(R"("(\\.|[^"\\])*"|'(\\.|[^'\\])*')")), string});
}

void CodeHighlighter::highlightBlock(const QString& text)
{
    for (const Rule& rule : rules_) {
        auto it = rule.pattern.globalMatch(text);
        while (it.hasNext()) {
            const QRegularExpressionMatch m = it.next();
            setFormat(int(m.capturedStart()), int(m.capturedLength()), rule.format);
        }
    }
    // Line comments last, so they win over what they contain (a # inside a string is rare in generated code).
    const QString marker = language_ == Language::Cpp ? QStringLiteral("//") : QStringLiteral("#");
    int start = 0;
    while ((start = int(text.indexOf(marker, start))) >= 0) {
        // Skip markers inside a string literal: count quotes before it.
        const QString before = text.left(start);
        if (before.count('"') % 2 == 0 && before.count('\'') % 2 == 0) {
            setFormat(start, int(text.size()) - start, comment_);
            break;
        }
        start += int(marker.size());
    }
}

}  // namespace ramiel::studio
