// The `--format` names and the one entry point the CLI calls for any of them.
#include "analyzer/report/report.h"

namespace tl::report {

const std::vector<std::string>& format_names() {
  static const std::vector<std::string> names = {"text", "json", "sarif", "github", "gitlab"};
  return names;
}

std::optional<Format> parse_format(std::string_view name) {
  if (name == "text") return Format::Text;
  if (name == "json") return Format::Json;
  if (name == "sarif") return Format::Sarif;
  if (name == "github") return Format::Github;
  if (name == "gitlab") return Format::Gitlab;
  return std::nullopt;
}

void write_report(std::ostream& out, std::ostream& err, Format format, const LintResult& res, const TextOptions& text,
                  const ReportOptions& opts) {
  switch (format) {
    case Format::Text: write_text(out, err, res, text); break;
    case Format::Json: write_json(out, res); break;
    case Format::Sarif: write_sarif(out, res, opts); break;
    case Format::Github: write_github(out, res, opts); break;
    case Format::Gitlab: write_gitlab(out, res, opts); break;
  }
}

}  // namespace tl::report
