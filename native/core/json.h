// json.h: a small strict JSON (RFC 8259) parser for the files s3 reads natively: safetensors
// headers, model.safetensors.index.json and config.json. Strict means: valid UTF-8 only, no
// trailing commas or comments, no duplicate object keys, a nesting depth limit, and every error
// reports the byte offset where it was found. Also the string escaping writers need.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace s3 {

class JsonError : public std::runtime_error {
 public:
  JsonError(const std::string& problem, size_t offset);
  size_t offset() const { return offset_; }
  const std::string& problem() const { return problem_; }  // the message without the offset

 private:
  std::string problem_;
  size_t offset_;
};

class JsonValue {
 public:
  enum class Kind { Null, Bool, Number, String, Array, Object };
  using Member = std::pair<std::string, JsonValue>;

  Kind kind() const { return kind_; }
  bool is_null() const { return kind_ == Kind::Null; }
  bool is_bool() const { return kind_ == Kind::Bool; }
  bool is_number() const { return kind_ == Kind::Number; }
  bool is_string() const { return kind_ == Kind::String; }
  bool is_array() const { return kind_ == Kind::Array; }
  bool is_object() const { return kind_ == Kind::Object; }

  // Byte offset of the value's first character in the parsed text, for error messages.
  size_t offset() const { return offset_; }

  // The accessors throw JsonError (at this value's offset) when the kind differs.
  bool as_bool() const;
  double as_number() const;
  const std::string& as_string() const;  // decoded UTF-8
  const std::vector<JsonValue>& as_array() const;
  const std::vector<Member>& as_object() const;  // members in document order

  // The number's exact value when its text is a plain non-negative integer ("0", "42"; not
  // "-1", "1.0" or "1e3") that fits in 64 bits; nullopt otherwise (including non-numbers).
  std::optional<uint64_t> as_uint64() const;

  // The member named `key` of an object, or nullptr (also for non-objects). Linear in the
  // number of members.
  const JsonValue* find(std::string_view key) const;

  // Kind name for messages: "null", "boolean", "number", "string", "array", "object".
  const char* kind_name() const;

 private:
  friend class JsonParser;

  Kind kind_ = Kind::Null;
  size_t offset_ = 0;
  bool bool_ = false;
  double number_ = 0.0;
  std::string text_;  // the decoded string, or a number's source text
  std::vector<JsonValue> array_;
  std::vector<Member> object_;
};

constexpr size_t kJsonDefaultMaxDepth = 128;

// Parses one JSON value (surrounded by optional whitespace) from `text`; throws JsonError.
JsonValue parse_json(std::string_view text, size_t max_depth = kJsonDefaultMaxDepth);

// Whether `text` is well-formed UTF-8 (no overlong forms, no surrogates, at most U+10FFFF).
bool is_valid_utf8(std::string_view text);

// `text` as a JSON string literal including the quotes: escapes '"', '\\' and control
// characters, passes other UTF-8 through. The caller guarantees valid UTF-8.
std::string json_quote(std::string_view text);

// A double as "%.17g" text: 17 significant digits, which read back to the same value.
std::string json_number(double value);

}  // namespace s3
