#pragma once
// The sections of the HTML report above its flame charts (html_report.hpp):
// the summaries, the failed runs with their trees, the regressions and the
// advice. Each writes one <section> with its <h2>.

#include <string>
#include <string_view>

#include "ctl/render/html_report.hpp"

namespace trace2d::ctl::render {

// Stored text cut to `max_chars` characters, the whole (up to a bound) in
// a title attribute to read on hover: a 4 KB argv must not widen the page.
void append_cut_text(std::string& out, std::string_view text, std::size_t max_chars);

void append_command_summary(std::string& out, const HtmlReport& report);
void append_repository_summary(std::string& out, const Summary& repositories);
void append_failed_runs(std::string& out, const std::vector<FailedRun>& failed);
void append_regressions(std::string& out, const Regressions& regressions);
void append_advice(std::string& out, const Advice& advice);

}  // namespace trace2d::ctl::render
