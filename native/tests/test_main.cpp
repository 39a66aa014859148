// test_main.cpp: runs the registered tests (all, those whose name contains argv[1], or with
// argv[1] = "=NAME" the one named NAME) and ends with the summary line "N passed, N failed" (plus
// ", N skipped" when any were skipped); the exit code is non-zero when a test failed or the filter
// matched nothing. "--list" prints every test's name, one per line, and runs none (the GPU check
// runs each device test in a process of its own, so that one crash cannot hide the others).
#include <stdlib.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "tests/test_framework.h"

namespace s3test {

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string pattern = std::string(base && base[0] ? base : "/tmp") + "/s3test.XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("TempDir: mkdtemp failed for " + pattern);
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

}  // namespace s3test

int main(int argc, char** argv) {
  const char* filter = argc > 1 ? argv[1] : nullptr;
  if (filter && std::strcmp(filter, "--list") == 0) {
    for (const s3test::TestCase& test : s3test::registry()) std::printf("%s\n", test.name);
    return 0;
  }
  const bool exact = filter && filter[0] == '=';
  int passed = 0, failed = 0, skipped = 0;
  for (const s3test::TestCase& test : s3test::registry()) {
    if (exact ? std::strcmp(test.name, filter + 1) != 0 : filter && std::strstr(test.name, filter) == nullptr) continue;
    std::printf("[ RUN  ] %s\n", test.name);
    std::fflush(stdout);
    try {
      test.function();
      passed++;
      std::printf("[   OK ] %s\n", test.name);
    } catch (const s3test::TestSkipped& skip) {
      skipped++;
      std::printf("[ SKIP ] %s: %s\n", test.name, skip.reason.c_str());
    } catch (const s3test::TestFailure& failure) {
      failed++;
      std::printf("%s\n[ FAIL ] %s\n", failure.message.c_str(), test.name);
    } catch (const std::exception& error) {
      failed++;
      std::printf("unexpected exception: %s\n[ FAIL ] %s\n", error.what(), test.name);
    } catch (...) {
      failed++;
      std::printf("unexpected non-standard exception\n[ FAIL ] %s\n", test.name);
    }
    std::fflush(stdout);
  }
  if (passed + failed + skipped == 0 && filter) std::printf("no test name contains '%s'\n", filter);
  if (skipped > 0) {
    std::printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
  } else {
    std::printf("%d passed, %d failed\n", passed, failed);
  }
  return failed > 0 || passed + failed + skipped == 0 ? 1 : 0;
}
