#include "palette.h"

#include <QCryptographicHash>

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

}  // namespace ramiel::studio
