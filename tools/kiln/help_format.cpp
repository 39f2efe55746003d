// A CLI11 formatter that wraps help text at the terminal's width, as argparse does.
#include "help_format.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <utility>

namespace kiln::cli {
namespace {

constexpr size_t kNameColumn = 28;  // where the help of a flag starts (a third of a narrow width)
constexpr size_t kMinimumWidth = 40;

// One line of text without line breaks, wrapped; an indented line (an example command) is kept.
void wrap_line(std::string_view text, size_t width, std::vector<std::string>& lines) {
  if (text.starts_with(' ')) {
    lines.emplace_back(text);
    return;
  }
  std::string line;
  bool glued = false;  // the next piece continues a word broken after a comma
  for (size_t i = 0; i < text.size();) {
    if (text[i] == ' ') {
      glued = false;
      ++i;
      continue;
    }
    size_t end = text.find_first_of(" ,", i);
    end = end == std::string_view::npos ? text.size() : end + (text[end] == ',');
    std::string_view piece = text.substr(i, end - i);
    std::string_view space = line.empty() || glued ? "" : " ";
    if (!line.empty() && line.size() + space.size() + piece.size() > width) {
      lines.push_back(line);
      line.clear();
      space = "";
    }
    line.append(space).append(piece);
    glued = piece.ends_with(',') && end < text.size() && text[end] != ' ';
    i = end;
  }
  lines.push_back(line);
}

std::string joined_lines(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& line : lines) out += line + '\n';
  return out;
}

// CLI11's layout with every piece of text wrapped.
class WrappingFormatter : public CLI::Formatter {
 public:
  std::string make_option(const CLI::Option* option, bool is_positional) const override {
    return entry(make_option_name(option, is_positional) + make_option_opts(option),
                 make_option_desc(option));
  }
  std::string make_subcommand(const CLI::App* command) const override {
    return entry(command->get_display_name(true), command->get_description());
  }
  std::string make_usage(const CLI::App* app, std::string name) const override {
    return wrapped(CLI::Formatter::make_usage(app, std::move(name)));
  }
  std::string make_description(const CLI::App* app) const override {
    return wrapped(CLI::Formatter::make_description(app));
  }
  std::string make_footer(const CLI::App* app) const override {
    return wrapped(CLI::Formatter::make_footer(app));
  }

 private:
  static std::string wrapped(const std::string& text) {
    if (text.empty()) return text;
    std::string body = text.ends_with('\n') ? text.substr(0, text.size() - 1) : text;
    return joined_lines(wrap_text(body, help_width()));
  }

  // "  --name TYPE=default   help ...", the help wrapped in its column, or under the name when
  // the name is too long for the column.
  static std::string entry(const std::string& name, const std::string& help) {
    const size_t width = help_width();
    const size_t column = std::min(kNameColumn, width / 3);
    std::vector<std::string> lines = wrap_text(name, width - 2);
    for (std::string& line : lines) line.insert(0, "  ");
    if (help.empty()) return joined_lines(lines);
    std::vector<std::string> help_lines = wrap_text(help, width - column);
    size_t first = 0;
    if (lines.size() == 1 && lines[0].size() + 2 <= column) {
      lines[0] += std::string(column - lines[0].size(), ' ') + help_lines[0];
      first = 1;
    }
    for (size_t i = first; i < help_lines.size(); ++i) {
      lines.push_back(std::string(column, ' ') + help_lines[i]);
    }
    return joined_lines(lines);
  }
};

}  // namespace

size_t help_width() {
  if (const char* columns = std::getenv("COLUMNS")) {
    const long value = std::strtol(columns, nullptr, 10);
    if (value > 0) return std::max(static_cast<size_t>(value), kMinimumWidth);
  }
  winsize size{};
  if (::isatty(STDOUT_FILENO) == 1 && ::ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 &&
      size.ws_col > 0) {
    return std::max(static_cast<size_t>(size.ws_col), kMinimumWidth);
  }
  return 80;
}

std::vector<std::string> wrap_text(std::string_view text, size_t width) {
  std::vector<std::string> lines;
  for (size_t start = 0;;) {
    const size_t end = text.find('\n', start);
    wrap_line(text.substr(start, end == std::string_view::npos ? end : end - start), width, lines);
    if (end == std::string_view::npos) return lines;
    start = end + 1;
  }
}

void use_help_format(CLI::App& app) { app.formatter(std::make_shared<WrappingFormatter>()); }

}  // namespace kiln::cli
