#include "palette.h"

#include <QCryptographicHash>
#include <QPainter>
#include <QProxyStyle>
#include <QStyleFactory>
#include <QStyleOption>

#include <algorithm>
#include <array>

namespace ramiel::studio {

QColor clusterColor(int cluster)
{
    // Tableau 20 reordered so that neighbours differ strongly; clusters are
    // numbered heaviest first, so the critical cluster is always blue.
    static const std::array<QRgb, 20> colors = {
        0x4e79a7, 0xf28e2b, 0x59a14f, 0xe15759, 0xb07aa1, 0x76b7b2, 0xedc948, 0xff9da7, 0x9c755f, 0xbab0ac,
        0xa0cbe8, 0xffbe7d, 0x8cd17d, 0xff9d9a, 0xd4a6c8, 0x86bcb6, 0xf1ce63, 0xfabfd2, 0xd7b5a6, 0x79706e,
    };
    if (cluster < 0)
        return QColor(0xdd, 0xdd, 0xdd);
    return QColor(colors[size_t(cluster) % colors.size()]);
}

QColor opTypeColor(const QString& opType)
{
    const QByteArray h = QCryptographicHash::hash(opType.toUtf8(), QCryptographicHash::Md5);
    const int hue = (uchar(h[0]) << 8 | uchar(h[1])) % 360;
    return QColor::fromHsl(hue, 150, 185);
}

QColor heatColor(double t)
{
    t = std::clamp(t, 0.0, 1.0);
    // Pale yellow through orange to dark red, readable with dark text at the low end.
    return QColor::fromHsvF(float(0.16 * (1 - t)), float(0.25 + 0.75 * t), float(1.0 - 0.35 * t));
}

QColor textColorOn(const QColor& background)
{
    return background.lightnessF() > 0.55 ? QColor(Qt::black) : QColor(Qt::white);
}

QColor runSeriesColor(int row)
{
    static const QColor colors[] = {QColor(0xf2, 0x8e, 0x2b), QColor(0x9c, 0x75, 0x5f), QColor(0x4e, 0x79, 0xa7)};
    return colors[std::clamp(row, 0, 2)];
}

const SceneTheme& sceneTheme(bool dark)
{
    static const SceneTheme light = [] {
        SceneTheme t;
        t.dark = false;
        t.background = QColor(0xfc, 0xfc, 0xfc);
        t.terminalFill = QColor(0xd8, 0xdc, 0xe0);
        t.unknownFill = QColor(0xe6, 0xe6, 0xe6);
        t.unclustered = QColor(0xf2, 0xf2, 0xf2);
        t.outline = QColor(0x60, 0x60, 0x60);
        t.criticalOutline = QColor(0x20, 0x20, 0x20);
        t.critical = QColor(0xc0, 0x1c, 0x28);
        t.edge = QColor(0x90, 0x90, 0x90);
        t.fadedEdge = QColor(0xb0, 0xb0, 0xb0);
        t.edgeLabel = QColor(0x40, 0x40, 0x40);
        t.panel = QColor(255, 255, 255, 225);
        t.panelBorder = QColor(0xb0, 0xb0, 0xb0);
        t.panelText = QColor(Qt::black);
        t.swatchBorder = QColor(0x50, 0x50, 0x50);
        return t;
    }();
    static const SceneTheme darkTheme = [] {
        SceneTheme t;
        t.dark = true;
        t.background = QColor(0x1e, 0x1f, 0x22);
        t.terminalFill = QColor(0x4a, 0x50, 0x58);
        t.unknownFill = QColor(0x55, 0x58, 0x5c);
        t.unclustered = QColor(0x3a, 0x3c, 0x40);
        t.outline = QColor(0x14, 0x14, 0x16);
        t.criticalOutline = QColor(0xf0, 0xf0, 0xf0);
        t.critical = QColor(0xf0, 0x4a, 0x55);
        t.edge = QColor(0x8a, 0x8e, 0x94);
        t.fadedEdge = QColor(0x5a, 0x5d, 0x62);
        t.edgeLabel = QColor(0xc8, 0xc8, 0xc8);
        t.panel = QColor(0x2b, 0x2d, 0x30, 230);
        t.panelBorder = QColor(0x60, 0x63, 0x68);
        t.panelText = QColor(0xe8, 0xe8, 0xe8);
        t.swatchBorder = QColor(0x10, 0x10, 0x10);
        return t;
    }();
    return dark ? darkTheme : light;
}

bool isDark(const QPalette& palette)
{
    return palette.color(QPalette::Window).lightness() < 128;
}

QPalette darkPalette()
{
    // From the button and window colors Qt derives Light, Midlight, Mid, Dark and Shadow.
    QPalette p(QColor(0x35, 0x37, 0x3a), QColor(0x2b, 0x2d, 0x30));
    p.setColor(QPalette::WindowText, QColor(0xe8, 0xe8, 0xe8));
    p.setColor(QPalette::Base, QColor(0x1e, 0x1f, 0x22));
    p.setColor(QPalette::AlternateBase, QColor(0x27, 0x29, 0x2c));
    p.setColor(QPalette::ToolTipBase, QColor(0x3c, 0x3f, 0x41));
    p.setColor(QPalette::ToolTipText, QColor(0xee, 0xee, 0xee));
    p.setColor(QPalette::Text, QColor(0xe8, 0xe8, 0xe8));
    p.setColor(QPalette::PlaceholderText, QColor(0x9a, 0x9a, 0x9a));
    p.setColor(QPalette::ButtonText, QColor(0xe8, 0xe8, 0xe8));
    p.setColor(QPalette::BrightText, QColor(0xff, 0x6b, 0x6b));
    p.setColor(QPalette::Link, QColor(0x6c, 0xa8, 0xff));
    p.setColor(QPalette::LinkVisited, QColor(0xb0, 0x8c, 0xff));
    p.setColor(QPalette::Highlight, QColor(0x2f, 0x65, 0xca));
    p.setColor(QPalette::HighlightedText, Qt::white);
    p.setColor(QPalette::Light, QColor(0x4a, 0x4d, 0x52));
    p.setColor(QPalette::Midlight, QColor(0x40, 0x43, 0x47));
    p.setColor(QPalette::Mid, QColor(0x50, 0x50, 0x50));
    p.setColor(QPalette::Dark, QColor(0x1a, 0x1b, 0x1d));
    p.setColor(QPalette::Shadow, QColor(0x10, 0x10, 0x10));
    for (QPalette::ColorRole role : {QPalette::Text, QPalette::ButtonText, QPalette::WindowText})
        p.setColor(QPalette::Disabled, role, QColor(0x80, 0x80, 0x80));
    p.setColor(QPalette::Disabled, QPalette::Base, QColor(0x26, 0x27, 0x2a));
    return p;
}

namespace {

class StudioStyle : public QProxyStyle {
public:
    StudioStyle() : QProxyStyle(QStyleFactory::create(QStringLiteral("Fusion"))) {}

    void drawPrimitive(PrimitiveElement element, const QStyleOption* option, QPainter* painter,
                       const QWidget* widget) const override
    {
        QProxyStyle::drawPrimitive(element, option, painter, widget);
        if (!isDark(option->palette) || (element != PE_IndicatorCheckBox && element != PE_IndicatorRadioButton))
            return;
        // An outline that reads on a dark window, checked or not.
        painter->save();
        painter->setRenderHint(QPainter::Antialiasing, element == PE_IndicatorRadioButton);
        QColor frame = option->palette.color(QPalette::Text);
        frame.setAlpha(option->state & State_Enabled ? 150 : 70);
        painter->setPen(QPen(frame, 1));
        painter->setBrush(Qt::NoBrush);
        const QRectF r = QRectF(option->rect).adjusted(0.5, 0.5, -1.5, -1.5);
        if (element == PE_IndicatorRadioButton)
            painter->drawEllipse(r);
        else
            painter->drawRoundedRect(r, 1.5, 1.5);
        painter->restore();
    }
};

}  // namespace

QStyle* createStudioStyle() { return new StudioStyle; }

}  // namespace ramiel::studio
