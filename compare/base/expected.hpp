// Errors as values: every fallible step of the compare tool returns Expected<T>, so the CLI
// can turn any failure into one line and exit status 2 (g++ 12 has no std::expected yet).
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace gpucheck::compare {

// One problem with one input: where (a file, a folder, an option) and what.
struct Error {
  std::string where;    // file or option the problem is about; may be empty
  std::string message;  // one line, no trailing full stop

  [[nodiscard]] std::string str() const { return where.empty() ? message : where + ": " + message; }
};

template <class T>
class Expected {
 public:
  Expected(T value) : v_(std::move(value)) {}        // NOLINT(google-explicit-constructor)
  Expected(Error error) : v_(std::move(error)) {}    // NOLINT(google-explicit-constructor)

  [[nodiscard]] bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T* operator->() { return &std::get<0>(v_); }
  const T* operator->() const { return &std::get<0>(v_); }
  T& operator*() & { return std::get<0>(v_); }
  const T& operator*() const& { return std::get<0>(v_); }

  [[nodiscard]] const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

// For steps that produce nothing but can fail.
struct Done {};
using Status = Expected<Done>;

}  // namespace gpucheck::compare
