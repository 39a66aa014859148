// json.cpp: a recursive-descent parser over the RFC 8259 grammar, UTF-8 validation, and
// string quoting.
#include "core/json.h"

#include <algorithm>
#include <charconv>
#include <cstdio>

namespace s3 {

namespace {

// Length of the well-formed UTF-8 sequence starting at text[0] (RFC 3629 table 3-7), or 0.
size_t utf8_sequence_length(const unsigned char* text, size_t available) {
  unsigned char lead = text[0];
  if (lead < 0x80) return 1;
  size_t length;
  unsigned char second_min = 0x80, second_max = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) second_min = 0xA0;  // overlong below U+0800
    if (lead == 0xED) second_max = 0x9F;  // U+D800..U+DFFF are surrogates, not characters
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) second_min = 0x90;  // overlong below U+10000
    if (lead == 0xF4) second_max = 0x8F;  // beyond U+10FFFF
  } else {
    return 0;
  }
  if (available < length) return 0;
  if (text[1] < second_min || text[1] > second_max) return 0;
  for (size_t i = 2; i < length; i++) {
    if (text[i] < 0x80 || text[i] > 0xBF) return 0;
  }
  return length;
}

void append_utf8(std::string& out, uint32_t code_point) {
  if (code_point < 0x80) {
    out += char(code_point);
  } else if (code_point < 0x800) {
    out += char(0xC0 | (code_point >> 6));
    out += char(0x80 | (code_point & 0x3F));
  } else if (code_point < 0x10000) {
    out += char(0xE0 | (code_point >> 12));
    out += char(0x80 | ((code_point >> 6) & 0x3F));
    out += char(0x80 | (code_point & 0x3F));
  } else {
    out += char(0xF0 | (code_point >> 18));
    out += char(0x80 | ((code_point >> 12) & 0x3F));
    out += char(0x80 | ((code_point >> 6) & 0x3F));
    out += char(0x80 | (code_point & 0x3F));
  }
}

}  // namespace

JsonError::JsonError(const std::string& problem, size_t offset)
    : std::runtime_error("JSON error at byte " + std::to_string(offset) + ": " + problem),
      problem_(problem),
      offset_(offset) {}

class JsonParser {
 public:
  JsonParser(std::string_view text, size_t max_depth) : text_(text), max_depth_(max_depth) {}

  JsonValue parse_document() {
    skip_whitespace();
    JsonValue value = parse_value(0);
    skip_whitespace();
    if (position_ != text_.size()) fail("unexpected text after the JSON value");
    return value;
  }

 private:
  [[noreturn]] void fail(const std::string& problem) const { throw JsonError(problem, position_); }

  bool at_end() const { return position_ >= text_.size(); }
  char peek() const { return text_[position_]; }

  void skip_whitespace() {
    while (!at_end() && (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r')) position_++;
  }

  void expect(char wanted, const char* context) {
    if (at_end()) fail(std::string("unexpected end of input, expected '") + wanted + "' " + context);
    if (peek() != wanted) fail(std::string("expected '") + wanted + "' " + context);
    position_++;
  }

  JsonValue parse_value(size_t depth) {
    if (at_end()) fail("unexpected end of input, expected a value");
    JsonValue value;
    value.offset_ = position_;
    switch (peek()) {
      case '{':
        if (depth >= max_depth_) fail("nesting deeper than " + std::to_string(max_depth_) + " levels");
        value.kind_ = JsonValue::Kind::Object;
        parse_object(value, depth + 1);
        break;
      case '[':
        if (depth >= max_depth_) fail("nesting deeper than " + std::to_string(max_depth_) + " levels");
        value.kind_ = JsonValue::Kind::Array;
        parse_array(value, depth + 1);
        break;
      case '"':
        value.kind_ = JsonValue::Kind::String;
        value.text_ = parse_string();
        break;
      case 't':
        parse_literal("true");
        value.kind_ = JsonValue::Kind::Bool;
        value.bool_ = true;
        break;
      case 'f':
        parse_literal("false");
        value.kind_ = JsonValue::Kind::Bool;
        break;
      case 'n':
        parse_literal("null");
        break;
      default:
        if (peek() == '-' || (peek() >= '0' && peek() <= '9')) {
          value.kind_ = JsonValue::Kind::Number;
          parse_number(value);
        } else {
          fail("expected a value");
        }
    }
    return value;
  }

  void parse_literal(std::string_view literal) {
    if (text_.substr(position_, literal.size()) != literal) fail("invalid literal, expected '" + std::string(literal) + "'");
    position_ += literal.size();
  }

  void parse_object(JsonValue& object, size_t depth) {
    position_++;  // '{'
    std::vector<size_t> key_offsets;
    skip_whitespace();
    if (!at_end() && peek() == '}') {
      position_++;
      return;
    }
    for (;;) {
      skip_whitespace();
      if (at_end() || peek() != '"') fail("expected a string key in object");
      key_offsets.push_back(position_);
      std::string key = parse_string();
      skip_whitespace();
      expect(':', "after object key");
      skip_whitespace();
      object.object_.emplace_back(std::move(key), parse_value(depth));
      skip_whitespace();
      if (at_end()) fail("unexpected end of input inside object");
      if (peek() == ',') {
        position_++;
        continue;
      }
      expect('}', "or ',' in object");
      break;
    }
    reject_duplicate_keys(object, key_offsets);
  }

  // Sorting member indices by key finds duplicates in O(m log m), so a hostile header with a
  // million keys cannot make this quadratic.
  void reject_duplicate_keys(const JsonValue& object, const std::vector<size_t>& key_offsets) {
    const std::vector<JsonValue::Member>& members = object.object_;
    std::vector<size_t> order(members.size());
    for (size_t i = 0; i < order.size(); i++) order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return members[a].first != members[b].first ? members[a].first < members[b].first : a < b;
    });
    for (size_t i = 1; i < order.size(); i++) {
      if (members[order[i]].first == members[order[i - 1]].first) {
        position_ = key_offsets[order[i]];
        fail("duplicate key " + json_quote(members[order[i]].first) + " in object");
      }
    }
  }

  void parse_array(JsonValue& array, size_t depth) {
    position_++;  // '['
    skip_whitespace();
    if (!at_end() && peek() == ']') {
      position_++;
      return;
    }
    for (;;) {
      skip_whitespace();
      array.array_.push_back(parse_value(depth));
      skip_whitespace();
      if (at_end()) fail("unexpected end of input inside array");
      if (peek() == ',') {
        position_++;
        continue;
      }
      expect(']', "or ',' in array");
      break;
    }
  }

  uint32_t parse_hex4() {
    if (text_.size() - position_ < 4) fail("truncated \\u escape");
    uint32_t code = 0;
    for (int i = 0; i < 4; i++) {
      char c = text_[position_];
      uint32_t digit;
      if (c >= '0' && c <= '9') {
        digit = uint32_t(c - '0');
      } else if (c >= 'a' && c <= 'f') {
        digit = uint32_t(c - 'a' + 10);
      } else if (c >= 'A' && c <= 'F') {
        digit = uint32_t(c - 'A' + 10);
      } else {
        fail("invalid hex digit in \\u escape");
      }
      code = code * 16 + digit;
      position_++;
    }
    return code;
  }

  // \uXXXX, with a UTF-16 surrogate pair combined into one code point; lone surrogates are
  // refused because they have no UTF-8 encoding.
  uint32_t parse_unicode_escape() {
    size_t escape_start = position_ - 2;
    uint32_t code = parse_hex4();
    if (code >= 0xDC00 && code <= 0xDFFF) {
      position_ = escape_start;
      fail("unpaired low surrogate in \\u escape");
    }
    if (code >= 0xD800 && code <= 0xDBFF) {
      if (text_.substr(position_, 2) != "\\u") {
        position_ = escape_start;
        fail("high surrogate in \\u escape not followed by a low surrogate");
      }
      position_ += 2;
      uint32_t low = parse_hex4();
      if (low < 0xDC00 || low > 0xDFFF) {
        position_ = escape_start;
        fail("high surrogate in \\u escape not followed by a low surrogate");
      }
      code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
    }
    return code;
  }

  std::string parse_string() {
    position_++;  // opening quote
    std::string out;
    for (;;) {
      if (at_end()) fail("unterminated string");
      unsigned char c = static_cast<unsigned char>(peek());
      if (c == '"') {
        position_++;
        return out;
      }
      if (c < 0x20) fail("unescaped control character in string");
      if (c == '\\') {
        position_++;
        if (at_end()) fail("unterminated escape in string");
        char escape = peek();
        position_++;
        switch (escape) {
          case '"': out += '"'; break;
          case '\\': out += '\\'; break;
          case '/': out += '/'; break;
          case 'b': out += '\b'; break;
          case 'f': out += '\f'; break;
          case 'n': out += '\n'; break;
          case 'r': out += '\r'; break;
          case 't': out += '\t'; break;
          case 'u': append_utf8(out, parse_unicode_escape()); break;
          default:
            position_--;
            fail("invalid escape in string");
        }
        continue;
      }
      size_t length = utf8_sequence_length(reinterpret_cast<const unsigned char*>(text_.data()) + position_,
                                           text_.size() - position_);
      if (length == 0) fail("invalid UTF-8 in string");
      out.append(text_.data() + position_, length);
      position_ += length;
    }
  }

  bool digit_here() const { return !at_end() && peek() >= '0' && peek() <= '9'; }

  void parse_number(JsonValue& number) {
    size_t start = position_;
    if (peek() == '-') position_++;
    if (!digit_here()) fail("expected a digit in number");
    if (peek() == '0') {
      position_++;
      if (digit_here()) fail("leading zero in number");
    } else {
      while (digit_here()) position_++;
    }
    if (!at_end() && peek() == '.') {
      position_++;
      if (!digit_here()) fail("expected a digit after the decimal point");
      while (digit_here()) position_++;
    }
    if (!at_end() && (peek() == 'e' || peek() == 'E')) {
      position_++;
      if (!at_end() && (peek() == '+' || peek() == '-')) position_++;
      if (!digit_here()) fail("expected a digit in the exponent");
      while (digit_here()) position_++;
    }
    number.text_ = std::string(text_.substr(start, position_ - start));
    const char* first = number.text_.data();
    const char* last = first + number.text_.size();
    std::from_chars_result result = std::from_chars(first, last, number.number_);
    if (result.ec != std::errc() || result.ptr != last) {
      position_ = start;
      fail("number " + number.text_ + " is out of the range of a double");
    }
  }

  std::string_view text_;
  size_t max_depth_;
  size_t position_ = 0;
};

bool JsonValue::as_bool() const {
  if (kind_ != Kind::Bool) throw JsonError(std::string("expected a boolean, found ") + kind_name(), offset_);
  return bool_;
}

double JsonValue::as_number() const {
  if (kind_ != Kind::Number) throw JsonError(std::string("expected a number, found ") + kind_name(), offset_);
  return number_;
}

const std::string& JsonValue::as_string() const {
  if (kind_ != Kind::String) throw JsonError(std::string("expected a string, found ") + kind_name(), offset_);
  return text_;
}

const std::vector<JsonValue>& JsonValue::as_array() const {
  if (kind_ != Kind::Array) throw JsonError(std::string("expected an array, found ") + kind_name(), offset_);
  return array_;
}

const std::vector<JsonValue::Member>& JsonValue::as_object() const {
  if (kind_ != Kind::Object) throw JsonError(std::string("expected an object, found ") + kind_name(), offset_);
  return object_;
}

std::optional<uint64_t> JsonValue::as_uint64() const {
  if (kind_ != Kind::Number || text_.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  uint64_t value = 0;
  std::from_chars_result result = std::from_chars(text_.data(), text_.data() + text_.size(), value);
  if (result.ec != std::errc() || result.ptr != text_.data() + text_.size()) return std::nullopt;
  return value;
}

const JsonValue* JsonValue::find(std::string_view key) const {
  if (kind_ != Kind::Object) return nullptr;
  for (const Member& member : object_) {
    if (member.first == key) return &member.second;
  }
  return nullptr;
}

const char* JsonValue::kind_name() const {
  switch (kind_) {
    case Kind::Null: return "null";
    case Kind::Bool: return "boolean";
    case Kind::Number: return "number";
    case Kind::String: return "string";
    case Kind::Array: return "array";
    case Kind::Object: return "object";
  }
  return "null";
}

JsonValue parse_json(std::string_view text, size_t max_depth) { return JsonParser(text, max_depth).parse_document(); }

bool is_valid_utf8(std::string_view text) {
  const unsigned char* bytes = reinterpret_cast<const unsigned char*>(text.data());
  size_t position = 0;
  while (position < text.size()) {
    size_t length = utf8_sequence_length(bytes + position, text.size() - position);
    if (length == 0) return false;
    position += length;
  }
  return true;
}

std::string json_number(double value) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", value);
  return buf;
}

std::string json_quote(std::string_view text) {
  static const char kHex[] = "0123456789abcdef";
  std::string out = "\"";
  for (char c : text) {
    unsigned char byte = static_cast<unsigned char>(c);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (byte < 0x20) {
          out += "\\u00";
          out += kHex[byte >> 4];
          out += kHex[byte & 0xF];
        } else {
          out += c;
        }
    }
  }
  out += '"';
  return out;
}

}  // namespace s3
