#pragma once
// report.html beside report.md: the same report as one self-contained page, readable offline
// without the folder: the Markdown rendered by cmark-gfm (Debian's libcmark-gfm-dev, with its
// table extension), every figure inlined as its SVG (or, without one, its PNG as a data URI), a
// little CSS. Written by `reproduce`, `run` and `plot` wherever they write report.md.
#include <filesystem>
#include <string>

namespace lenlab {

// The page for `markdown`, whose images ![alt](figX.png) name files in `dir`. A figure with
// neither its SVG nor its PNG in `dir` (gnuplot missing) becomes a line saying so.
std::string report_html(const std::string& markdown, const std::filesystem::path& dir,
                        const std::string& title);

}  // namespace lenlab
