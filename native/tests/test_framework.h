// test_framework.h: the minimal test harness for s3's native tests. TEST(name) registers a
// function; CHECK* macros stop the current test at the first failure and report file:line with
// the values involved; SKIP(reason) ends a test as skipped (for example without a GPU);
// max_or_nan keeps the worst of a test's differences with NaN counted.
// test_main.cpp runs the registered tests.
#pragma once

#include <cmath>
#include <exception>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace s3test {

struct TestCase {
  const char* name;
  void (*function)();
};

inline std::vector<TestCase>& registry() {
  static std::vector<TestCase> tests;
  return tests;
}

struct Registrar {
  Registrar(const char* name, void (*function)()) { registry().push_back({name, function}); }
};

struct TestFailure {
  std::string message;
};

struct TestSkipped {
  std::string reason;
};

[[noreturn]] inline void fail(const char* file, int line, const std::string& message) {
  throw TestFailure{std::string(file) + ":" + std::to_string(line) + ": " + message};
}

// The larger of a running worst difference and a new one, where NaN wins and stays: std::max(worst,
// NaN) is worst, so a NaN difference would pass any `worst <= threshold` check unseen.
inline double max_or_nan(double worst, double difference) {
  if (std::isnan(worst)) return worst;
  return std::isnan(difference) || difference > worst ? difference : worst;
}

template <typename T, typename = void>
struct is_streamable : std::false_type {};
template <typename T>
struct is_streamable<T, std::void_t<decltype(std::declval<std::ostream&>() << std::declval<const T&>())>>
    : std::true_type {};

// Renders a value for a failure message: small integers as numbers (not characters), enums by
// their underlying value, floats with full precision.
template <typename T>
std::string show(const T& value) {
  std::ostringstream out;
  if constexpr (std::is_same_v<T, bool>) {
    out << (value ? "true" : "false");
  } else if constexpr (std::is_enum_v<T>) {
    out << "enum " << static_cast<long long>(value);
  } else if constexpr (std::is_integral_v<T> && sizeof(T) == 1) {
    out << static_cast<int>(value);
  } else if constexpr (std::is_floating_point_v<T>) {
    out.precision(17);
    out << value;
  } else if constexpr (is_streamable<T>::value) {
    out << value;
  } else {
    out << "<value>";
  }
  return out.str();
}

// A scratch directory, removed with its contents when the object goes out of scope.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace s3test

#define S3TEST_CONCAT_INNER(a, b) a##b
#define S3TEST_CONCAT(a, b) S3TEST_CONCAT_INNER(a, b)

#define TEST(name)                                                                  \
  static void S3TEST_CONCAT(s3test_body_, name)();                                  \
  static s3test::Registrar S3TEST_CONCAT(s3test_registrar_, name)(#name,            \
                                                                  &S3TEST_CONCAT(s3test_body_, name)); \
  static void S3TEST_CONCAT(s3test_body_, name)()

#define CHECK(condition)                                                          \
  do {                                                                            \
    if (!(condition)) s3test::fail(__FILE__, __LINE__, "CHECK(" #condition ") failed"); \
  } while (0)

#define CHECK_EQ(actual, expected)                                                                 \
  do {                                                                                             \
    /* copies, not references: (expected) may be std::min of temporaries, already destroyed */  \
    const auto s3test_actual = (actual);                                                           \
    const auto s3test_expected = (expected);                                                       \
    if (!(s3test_actual == s3test_expected)) {                                                     \
      s3test::fail(__FILE__, __LINE__,                                                             \
                   "CHECK_EQ(" #actual ", " #expected ") failed: " + s3test::show(s3test_actual) + \
                       " != " + s3test::show(s3test_expected));                                    \
    }                                                                                              \
  } while (0)

#define CHECK_NEAR(actual, expected, tolerance)                                                      \
  do {                                                                                               \
    double s3test_actual = double(actual), s3test_expected = double(expected);                       \
    if (!(std::fabs(s3test_actual - s3test_expected) <= double(tolerance))) {                       \
      s3test::fail(__FILE__, __LINE__,                                                               \
                   "CHECK_NEAR(" #actual ", " #expected ", " #tolerance ") failed: " +               \
                       s3test::show(s3test_actual) + " vs " + s3test::show(s3test_expected));        \
    }                                                                                                \
  } while (0)

// CHECK_THROWS(ExceptionType, expression...): the expression must throw ExceptionType (or a
// subclass; ExceptionType must be narrower than std::exception). The expression is variadic so
// it may contain commas.
#define CHECK_THROWS(ExceptionType, ...)                                                             \
  do {                                                                                               \
    bool s3test_threw = false;                                                                       \
    try {                                                                                            \
      (void)(__VA_ARGS__);                                                                           \
    } catch (const ExceptionType&) {                                                                 \
      s3test_threw = true;                                                                           \
    } catch (const std::exception& s3test_other) {                                                   \
      s3test::fail(__FILE__, __LINE__, "CHECK_THROWS(" #ExceptionType ", " #__VA_ARGS__              \
                   ") threw another exception: " + std::string(s3test_other.what()));               \
    }                                                                                                \
    if (!s3test_threw) {                                                                             \
      s3test::fail(__FILE__, __LINE__, "CHECK_THROWS(" #ExceptionType ", " #__VA_ARGS__ ") did not throw"); \
    }                                                                                                \
  } while (0)

#define SKIP(reason) throw s3test::TestSkipped{reason}
