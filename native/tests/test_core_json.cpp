// test_core_json.cpp: the strict JSON parser: every value kind, escapes and surrogate pairs, exact
// integers, and one refusal (with its byte offset) per kind of malformed input.
#include <string>

#include "core/json.h"
#include "tests/test_framework.h"

using namespace s3;

namespace {

// The offset parse_json reports for malformed `text`, or SIZE_MAX if it parsed.
size_t error_offset(const std::string& text, size_t max_depth = kJsonDefaultMaxDepth) {
  try {
    parse_json(text, max_depth);
  } catch (const JsonError& error) {
    return error.offset();
  }
  return SIZE_MAX;
}

}  // namespace

TEST(json_parses_every_kind) {
  JsonValue root = parse_json(
      " {\"null\": null, \"yes\": true, \"no\": false, \"int\": 42, \"neg\": -1.5e3, \"text\": \"hi\","
      " \"list\": [1, [2, {}], []], \"nested\": {\"a\": {\"b\": \"c\"}}} \n");
  CHECK(root.is_object());
  CHECK_EQ(root.as_object().size(), size_t(8));
  CHECK(root.find("null")->is_null());
  CHECK_EQ(root.find("yes")->as_bool(), true);
  CHECK_EQ(root.find("no")->as_bool(), false);
  CHECK_EQ(root.find("int")->as_number(), 42.0);
  CHECK_EQ(root.find("neg")->as_number(), -1500.0);
  CHECK_EQ(root.find("text")->as_string(), std::string("hi"));
  const std::vector<JsonValue>& list = root.find("list")->as_array();
  CHECK_EQ(list.size(), size_t(3));
  CHECK_EQ(list[1].as_array()[0].as_number(), 2.0);
  CHECK(list[1].as_array()[1].is_object());
  CHECK(list[2].as_array().empty());
  CHECK_EQ(root.find("nested")->find("a")->find("b")->as_string(), std::string("c"));
  CHECK(root.find("missing") == nullptr);
  CHECK(root.find("int")->find("x") == nullptr);
  CHECK_EQ(root.as_object()[0].first, std::string("null"));  // document order
  CHECK_EQ(root.as_object()[7].first, std::string("nested"));
  CHECK_EQ(root.find("yes")->offset(), size_t(23));  // the "t" of true
}

TEST(json_scalars_at_top_level) {
  CHECK(parse_json("null").is_null());
  CHECK_EQ(parse_json(" 0 ").as_number(), 0.0);
  CHECK_EQ(parse_json("-0").as_number(), 0.0);
  CHECK_EQ(parse_json("1E+2").as_number(), 100.0);
  CHECK_EQ(parse_json("2.5e-1").as_number(), 0.25);
  CHECK_EQ(parse_json("\"\"").as_string(), std::string());
}

TEST(json_string_escapes) {
  CHECK_EQ(parse_json(R"("a\"b\\c\/d\b\f\n\r\t")").as_string(), std::string("a\"b\\c/d\b\f\n\r\t"));
  CHECK_EQ(parse_json(R"("\u00e9\u4E2D")").as_string(), std::string("\xC3\xA9\xE4\xB8\xAD"));
  CHECK_EQ(parse_json(R"("\ud83d\ude00")").as_string(), std::string("\xF0\x9F\x98\x80"));  // U+1F600
  CHECK_EQ(parse_json(R"("\u0000")").as_string(), std::string(1, '\0'));
  CHECK_EQ(parse_json("\"h\xC3\xA9llo \xF0\x9F\x98\x80\"").as_string(), std::string("h\xC3\xA9llo \xF0\x9F\x98\x80"));
}

TEST(json_exact_integers) {
  CHECK(parse_json("42").as_uint64() == uint64_t(42));
  CHECK(parse_json("0").as_uint64() == uint64_t(0));
  CHECK(parse_json("18446744073709551615").as_uint64() == UINT64_MAX);
  CHECK(parse_json("9007199254740993").as_uint64() == uint64_t(9007199254740993ull));  // not a double
  CHECK(!parse_json("18446744073709551616").as_uint64().has_value());
  CHECK(!parse_json("-1").as_uint64().has_value());
  CHECK(!parse_json("1.0").as_uint64().has_value());
  CHECK(!parse_json("1e3").as_uint64().has_value());
  CHECK(!parse_json("\"7\"").as_uint64().has_value());
}

TEST(json_refuses_malformed_input_with_offsets) {
  CHECK_EQ(error_offset(""), size_t(0));
  CHECK_EQ(error_offset("   "), size_t(3));
  CHECK_EQ(error_offset("[1,]"), size_t(3));
  CHECK_EQ(error_offset("{\"a\":1,}"), size_t(7));
  CHECK_EQ(error_offset("{\"a\" 1}"), size_t(5));
  CHECK_EQ(error_offset("{1:2}"), size_t(1));
  CHECK_EQ(error_offset("[1 2]"), size_t(3));
  CHECK_EQ(error_offset("[01]"), size_t(2));
  CHECK_EQ(error_offset("1."), size_t(2));
  CHECK_EQ(error_offset("-"), size_t(1));
  CHECK_EQ(error_offset(".5"), size_t(0));
  CHECK_EQ(error_offset("+1"), size_t(0));
  CHECK_EQ(error_offset("1e"), size_t(2));
  CHECK_EQ(error_offset("tru"), size_t(0));
  CHECK_EQ(error_offset("nulll"), size_t(4));
  CHECK_EQ(error_offset("1 2"), size_t(2));
  CHECK_EQ(error_offset("\"abc"), size_t(4));
  CHECK_EQ(error_offset("\"a\\x\""), size_t(3));
  CHECK_EQ(error_offset("\"a\\u12G4\""), size_t(6));
  CHECK_EQ(error_offset("\"\\u12"), size_t(3));
  CHECK_EQ(error_offset("\"a\tb\""), size_t(2));
  CHECK_EQ(error_offset("[\"\\ud800\"]"), size_t(2));         // lone high surrogate
  CHECK_EQ(error_offset("\"\\udc00\""), size_t(1));           // lone low surrogate
  CHECK_EQ(error_offset("\"\\ud800\\u0041\""), size_t(1));    // high then not-low
  CHECK_EQ(error_offset("\"\xC0\x80\""), size_t(1));          // overlong NUL
  CHECK_EQ(error_offset("\"\xED\xA0\x80\""), size_t(1));      // UTF-8 encoded surrogate
  CHECK_EQ(error_offset("\"\xF4\x90\x80\x80\""), size_t(1));  // beyond U+10FFFF
  CHECK_EQ(error_offset("\"ok\xE4\xB8\""), size_t(3));        // truncated sequence
  CHECK_EQ(error_offset("\"\xFF\""), size_t(1));
  CHECK_EQ(error_offset("{\"a\":1,\"b\":2,\"a\":3}"), size_t(13));  // duplicate key, at the second
  CHECK_EQ(error_offset("1e400"), size_t(0));
  CHECK_EQ(error_offset("NaN"), size_t(0));
  CHECK_EQ(error_offset("[Infinity]"), size_t(1));
  CHECK_EQ(error_offset("// comment\n1"), size_t(0));
  CHECK_EQ(error_offset("{'a':1}"), size_t(1));
  CHECK_EQ(error_offset(std::string("[1]\0", 4)), size_t(3));
}

TEST(json_depth_limit) {
  std::string deep_ok = std::string(128, '[') + std::string(128, ']');
  CHECK(parse_json(deep_ok).is_array());
  std::string too_deep = std::string(129, '[') + std::string(129, ']');
  CHECK_EQ(error_offset(too_deep), size_t(128));
  CHECK_EQ(error_offset("{\"a\":{\"b\":[1]}}", 2), size_t(10));
  CHECK_EQ(error_offset(std::string(100000, '[')), size_t(128));  // no stack overflow
}

TEST(json_error_messages_and_kind_errors) {
  try {
    parse_json("{\"a\":1,\"a\":2}");
    CHECK(false);
  } catch (const JsonError& error) {
    CHECK_EQ(std::string(error.what()), std::string("JSON error at byte 7: duplicate key \"a\" in object"));
  }
  JsonValue number = parse_json("[3]").as_array()[0];
  CHECK_THROWS(JsonError, number.as_string());
  CHECK_THROWS(JsonError, number.as_object());
  CHECK_THROWS(JsonError, number.as_array());
  CHECK_THROWS(JsonError, number.as_bool());
  CHECK_THROWS(JsonError, parse_json("\"x\"").as_number());
  CHECK_EQ(std::string(number.kind_name()), std::string("number"));
}

TEST(json_quote_round_trips) {
  std::string every_ascii;
  for (int c = 0; c < 128; c++) every_ascii += char(c);
  std::string text = every_ascii + "\xC3\xA9\xF0\x9F\x98\x80";
  std::string quoted = json_quote(text);
  CHECK_EQ(parse_json(quoted).as_string(), text);
  CHECK_EQ(json_quote("a\"b\\\n\x01"), std::string("\"a\\\"b\\\\\\n\\u0001\""));
  CHECK(is_valid_utf8(text));
  CHECK(!is_valid_utf8("\xC3"));
  CHECK(!is_valid_utf8("\xE0\x80\x80"));
  CHECK(is_valid_utf8(""));
}

TEST(json_reads_a_config) {
  JsonValue config = parse_json(R"({
    "architectures": ["Qwen3ForCausalLM"], "hidden_size": 1024, "rms_norm_eps": 1e-06,
    "rope_theta": 1000000, "tie_word_embeddings": true, "torch_dtype": "bfloat16", "rope_scaling": null
  })");
  CHECK_EQ(config.find("architectures")->as_array()[0].as_string(), std::string("Qwen3ForCausalLM"));
  CHECK(config.find("hidden_size")->as_uint64() == uint64_t(1024));
  CHECK_EQ(config.find("rms_norm_eps")->as_number(), 1e-6);
  CHECK_EQ(config.find("rope_theta")->as_number(), 1e6);
  CHECK(config.find("rope_scaling")->is_null());
}
