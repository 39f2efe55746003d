// Python-compatible JSON writing and reading (NaN/Infinity, float repr, escapes).
#include "kiln/train/log_python_json.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <vector>

#include "kiln/io/json_util.h"
#include "kiln/ir/error.h"

namespace kiln {
namespace {

// Strings standing in for Python's bare NaN/Infinity tokens while nlohmann parses the text; the
// leading control character makes a clash with real data implausible.
struct NonFinite {
  std::string_view token;
  std::string_view marker;
  double value;
};
constexpr NonFinite kNonFinite[] = {
    {"NaN", "\x01kiln:NaN", std::numeric_limits<double>::quiet_NaN()},
    {"Infinity", "\x01kiln:Infinity", std::numeric_limits<double>::infinity()},
    {"-Infinity", "\x01kiln:-Infinity", -std::numeric_limits<double>::infinity()},
};

void append_hex4(std::string& out, unsigned value) {
  char buffer[16];  // "\\uXXXX" fits in 7; room for any unsigned keeps -Wformat-truncation quiet
  std::snprintf(buffer, sizeof buffer, "\\u%04x", value & 0xFFFFu);
  out += buffer;
}

// Decodes the UTF-8 sequence at text[i], advancing i; throws on invalid bytes.
char32_t next_code_point(std::string_view text, size_t& i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  unsigned char lead = byte(i);
  size_t length = lead < 0x80                   ? 1
                  : lead >= 0xC2 && lead <= 0xDF ? 2
                  : lead >= 0xE0 && lead <= 0xEF ? 3
                  : lead >= 0xF0 && lead <= 0xF4 ? 4
                                                 : 0;
  check(length != 0 && i + length <= text.size(), "json", "string is not valid UTF-8 at byte ", i);
  char32_t code = length == 1 ? lead : lead & (0x7F >> length);
  for (size_t k = 1; k < length; ++k) {
    check((byte(i + k) & 0xC0) == 0x80, "json", "string is not valid UTF-8 at byte ", i);
    code = (code << 6) | (byte(i + k) & 0x3F);
  }
  static constexpr char32_t kMinimum[] = {0, 0, 0x80, 0x800, 0x10000};
  check(code >= kMinimum[length] && code <= 0x10FFFF && (code < 0xD800 || code > 0xDFFF), "json",
        "string is not valid UTF-8 at byte ", i);
  i += length;
  return code;
}

// json.dumps with ensure_ascii: printable ASCII as is, everything else escaped.
void dump_string(std::string_view text, std::string& out) {
  out += '"';
  for (size_t i = 0; i < text.size();) {
    char32_t code = next_code_point(text, i);
    switch (code) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (code >= 0x20 && code < 0x7F) {
          out += static_cast<char>(code);
        } else if (code < 0x10000) {
          append_hex4(out, code);
        } else {
          char32_t v = code - 0x10000;
          append_hex4(out, 0xD800 + (v >> 10));
          append_hex4(out, 0xDC00 + (v & 0x3FF));
        }
    }
  }
  out += '"';
}

std::string json_float(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "Infinity" : "-Infinity";
  return python_float_repr(value);
}

void dump(const nlohmann::json& value, int indent, int level, std::string& out) {
  using Type = nlohmann::json::value_t;
  // Opens a line for the next item when indenting, as Python's encoder does.
  auto newline = [&](int depth) {
    if (indent < 0) return;
    out += '\n';
    out.append(static_cast<size_t>(indent * depth), ' ');
  };
  const char* separator = indent < 0 ? ", " : ",";
  switch (value.type()) {
    case Type::null: out += "null"; return;
    case Type::boolean: out += value.get<bool>() ? "true" : "false"; return;
    case Type::number_integer: out += std::to_string(value.get<int64_t>()); return;
    case Type::number_unsigned: out += std::to_string(value.get<uint64_t>()); return;
    case Type::number_float: out += json_float(value.get<double>()); return;
    case Type::string: dump_string(value.get_ref<const std::string&>(), out); return;
    case Type::array: {
      if (value.empty()) {
        out += "[]";
        return;
      }
      out += '[';
      bool first = true;
      for (const nlohmann::json& item : value) {
        if (!first) out += separator;
        first = false;
        newline(level + 1);
        dump(item, indent, level + 1, out);
      }
      newline(level);
      out += ']';
      return;
    }
    case Type::object: {
      if (value.empty()) {
        out += "{}";
        return;
      }
      out += '{';
      bool first = true;
      // nlohmann's object is a std::map: byte order of UTF-8 keys is Python's code point order.
      for (const auto& [key, item] : value.items()) {
        if (!first) out += separator;
        first = false;
        newline(level + 1);
        dump_string(key, out);
        out += ": ";
        dump(item, indent, level + 1, out);
      }
      newline(level);
      out += '}';
      return;
    }
    default: fail("json", "cannot write a JSON ", value.type_name(), " value");
  }
}

// Replaces bare NaN/Infinity/-Infinity outside strings by marker strings; false when none.
bool replace_non_finite(std::string_view text, std::string& out) {
  bool replaced = false;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < text.size()) {
        out += text[++i];
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    std::string_view rest = text.substr(i);
    const NonFinite* found = nullptr;
    for (const NonFinite& entry : kNonFinite) {
      if (rest.starts_with(entry.token)) found = &entry;
    }
    if (found != nullptr) {
      out += "\"\\u0001";
      out += found->marker.substr(1);
      out += '"';
      i += found->token.size() - 1;
      replaced = true;
      continue;
    }
    if (c == '"') in_string = true;
    out += c;
  }
  return replaced;
}

void restore_non_finite(nlohmann::json& value) {
  if (value.is_string()) {
    const std::string& text = value.get_ref<const std::string&>();
    for (const NonFinite& entry : kNonFinite) {
      if (text == entry.marker) {
        value = entry.value;
        return;
      }
    }
  } else if (value.is_structured()) {
    for (nlohmann::json& item : value) restore_non_finite(item);
  }
}

}  // namespace

std::string python_float_repr(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  // Shortest round-trip digits from to_chars, laid out by Python's rules (float_repr_style
  // 'short', format code 'r').
  char buffer[64];
  auto result = std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::scientific);
  std::string_view text(buffer, static_cast<size_t>(result.ptr - buffer));
  std::string out;
  if (text.front() == '-') {
    out += '-';
    text.remove_prefix(1);
  }
  size_t e = text.find('e');
  std::string digits;
  for (char c : text.substr(0, e)) {
    if (c != '.') digits += c;
  }
  int exponent = std::atoi(std::string(text.substr(e + 1)).c_str());
  int decpt = exponent + 1;  // value = 0.DIGITS * 10^decpt
  auto ndigits = static_cast<int>(digits.size());
  if (decpt <= -4 || decpt > 16) {
    out += digits[0];
    if (ndigits > 1) out += "." + digits.substr(1);
    char tail[16];
    std::snprintf(tail, sizeof tail, "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
    out += tail;
  } else if (decpt <= 0) {
    out += "0." + std::string(static_cast<size_t>(-decpt), '0') + digits;
  } else if (decpt < ndigits) {
    out += digits.substr(0, static_cast<size_t>(decpt)) + "." + digits.substr(decpt);
  } else {
    out += digits + std::string(static_cast<size_t>(decpt - ndigits), '0') + ".0";
  }
  return out;
}

double python_round(double value, int ndigits) {
  check(ndigits >= 0, "python_round", "ndigits must be >= 0, got ", ndigits);
  if (!std::isfinite(value)) return value;
  // glibc's printf is exact and rounds half to even, as Python's dtoa does.
  int size = std::snprintf(nullptr, 0, "%.*f", ndigits, value);
  std::vector<char> text(static_cast<size_t>(size) + 1);
  std::snprintf(text.data(), text.size(), "%.*f", ndigits, value);
  return std::strtod(text.data(), nullptr);
}

std::string python_json_dumps(const nlohmann::json& value, int indent) {
  std::string out;
  dump(value, indent, 0, out);
  return out;
}

nlohmann::json python_json_loads(std::string_view text, std::string_view where) {
  std::string replaced;
  if (!replace_non_finite(text, replaced)) return json_parse(text, where);
  nlohmann::json value = json_parse(replaced, where);
  restore_non_finite(value);
  return value;
}

}  // namespace kiln
