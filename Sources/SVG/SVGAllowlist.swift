/// What an SVG may keep (SPEC: Source formats): shapes, paths, text, gradients, patterns,
/// masks, clip paths, markers, filters made of pure primitives, and `use` of an element of
/// the same document. Everything else (scripts, `foreignObject`, `feImage`, animation,
/// `<iframe>`, elements of other namespaces) is dropped with what it holds.
enum SVGAllowlist {
    /// `a` (kept as `g`), `style`, `image` and `use` are decided one by one, not here.
    static let elements: Set<String> = [
        "svg", "g", "defs", "symbol", "title", "desc", "switch",
        "path", "rect", "circle", "ellipse", "line", "polyline", "polygon",
        "text", "tspan", "textPath",
        "linearGradient", "radialGradient", "stop", "pattern", "mask", "clipPath", "marker",
        "filter", "feBlend", "feColorMatrix", "feComponentTransfer", "feComposite", "feConvolveMatrix",
        "feDiffuseLighting", "feDisplacementMap", "feDistantLight", "feDropShadow", "feFlood", "feFuncA",
        "feFuncB", "feFuncG", "feFuncR", "feGaussianBlur", "feMerge", "feMergeNode", "feMorphology", "feOffset",
        "fePointLight", "feSpecularLighting", "feSpotLight", "feTile", "feTurbulence",
    ]

    /// Attributes without a namespace. `href` and `style` are checked on their own; any
    /// value here with a `url(…)` is kept only when every one names `#id`.
    static let attributes: Set<String> = [
        // Structure and geometry.
        "id", "class", "lang", "version", "baseProfile", "viewBox", "preserveAspectRatio", "transform",
        "width", "height", "x", "y", "x1", "y1", "x2", "y2", "cx", "cy", "r", "rx", "ry", "fx", "fy", "fr", "d",
        "points", "pathLength", "systemLanguage", "requiredExtensions", "requiredFeatures",
        // Paint servers, masks, clips, markers.
        "offset", "gradientUnits", "gradientTransform", "spreadMethod", "patternUnits", "patternContentUnits",
        "patternTransform", "maskUnits", "maskContentUnits", "clipPathUnits", "markerUnits", "markerWidth",
        "markerHeight", "refX", "refY", "orient",
        // Filters.
        "filterUnits", "primitiveUnits", "result", "in", "in2", "mode", "operator", "k1", "k2", "k3", "k4",
        "stdDeviation", "dx", "dy", "values", "type", "tableValues", "slope", "intercept", "amplitude", "exponent",
        "order", "kernelMatrix", "divisor", "bias", "targetX", "targetY", "edgeMode", "kernelUnitLength",
        "preserveAlpha", "surfaceScale", "diffuseConstant", "specularConstant", "specularExponent",
        "limitingConeAngle", "pointsAtX", "pointsAtY", "pointsAtZ", "z", "azimuth", "elevation", "scale",
        "xChannelSelector", "yChannelSelector", "radius", "baseFrequency", "numOctaves", "seed", "stitchTiles",
        // Text.
        "text-anchor", "font", "font-family", "font-size", "font-size-adjust", "font-weight", "font-style",
        "font-variant", "font-stretch", "letter-spacing", "word-spacing", "text-decoration", "dominant-baseline",
        "alignment-baseline", "baseline-shift", "writing-mode", "direction", "unicode-bidi", "rotate", "textLength",
        "lengthAdjust", "startOffset", "method", "spacing", "side",
        // Presentation.
        "fill", "fill-opacity", "fill-rule", "stroke", "stroke-width", "stroke-opacity", "stroke-linecap",
        "stroke-linejoin", "stroke-miterlimit", "stroke-dasharray", "stroke-dashoffset", "opacity", "color",
        "display", "visibility", "overflow", "clip", "clip-path", "clip-rule", "mask", "filter", "marker",
        "marker-start", "marker-mid", "marker-end", "shape-rendering", "text-rendering", "image-rendering",
        "color-interpolation", "color-interpolation-filters", "color-rendering", "paint-order", "vector-effect",
        "mix-blend-mode", "isolation", "enable-background", "flood-color", "flood-opacity", "lighting-color",
        "stop-color", "stop-opacity",
    ]
}
