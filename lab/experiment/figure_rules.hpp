#pragma once
// The rules a figure table of an experiment config must follow beyond its run settings: its plot
// and metric against every line's task, a misalignment figure's at_length, a baseline line, a
// settings line's label. Each refusal is a UsageError naming the config, the line and the key
// (lab/experiment/experiment_config.hpp parses the rest).
#include <toml++/toml.h>

#include <string>

#include "results/figure_setup.hpp"

namespace lenlab {

// Where a TOML node is, for messages: "SOURCE:LINE [TABLE]".
std::string where(const std::string& source, const toml::node& node, const std::string& table);

// A figure table's `plot` and `metric` (text, not run settings) into fig.plot and fig.metric,
// checked against the task of every line (its settings after `vary`), so that a figure that cannot
// be drawn fails at load time. An absent metric becomes the lines' default, which they must share.
void resolve_plot_and_metric(FigureSpec& fig, const toml::table& t, const std::string& source,
                             const std::string& at);
// A misalignment figure's `at_length` into fig.at_length: the key's length, or by default the
// longest test length of its lines. Every line must test it, so that every run has a y there.
// `at_length` on another plot is refused: it would silently mean nothing.
void resolve_at_length(FigureSpec& fig, const toml::table& t, const std::string& source,
                       const std::string& at);
// `baseline` into fig.baseline: the label of one of the figure's lines, on a length plot of a
// success metric (the method comparison ranks lines by it; report/comparison_report.hpp).
void resolve_baseline(FigureSpec& fig, const toml::table& t, const std::string& source,
                      const std::string& at);
// vary = "settings": every value a table with a unique, non-empty string `label` (its settings are
// checked with the others, by line_spec).
void check_settings_lines(const FigureSpec& fig, const toml::array& values,
                          const std::string& source, const std::string& at);

}  // namespace lenlab
