#pragma once
// An environment variable set for as long as the object lives: for the
// program under test, or the processes a test starts, which inherit it.

#include <cstdlib>
#include <string>

namespace trace2d::test {

class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : m_name(name) { ::setenv(name, value.c_str(), 1); }
  ~ScopedEnv() { ::unsetenv(m_name); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* m_name;
};

}  // namespace trace2d::test
