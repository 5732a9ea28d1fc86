// A process's memory as an expression of the value a sweep gives its child
// (`memory: "2GiB + 48MiB*bs + 0.02MiB*bs^2"`, docs/scenarios.md): a sum of
// terms, each a product of sizes or numbers and bs[^N]. Pure.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace gpuwatch::fake_nvml {

class MemoryExpression {
 public:
  // The expression, or std::nullopt with `error` naming the bad part and its
  // column (1-based, in `text`).
  static std::optional<MemoryExpression> Parse(const std::string& text, std::string* error);
  // Whether `text` is meant as one: it names bs.
  static bool Mentions(const std::string& text);

  double Evaluate(double bs) const;  // bytes, >= 0

 private:
  struct Term {
    double coefficient = 1;  // bytes
    int power = 0;           // of bs
  };
  std::vector<Term> terms_;
};

}  // namespace gpuwatch::fake_nvml
