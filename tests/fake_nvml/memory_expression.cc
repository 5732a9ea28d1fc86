#include "memory_expression.h"

#include <cmath>
#include <cstdlib>

#include "units.h"

namespace gpuwatch::fake_nvml {
namespace {

// [begin, end) of `text` without surrounding blanks.
void Trim(const std::string& text, std::size_t& begin, std::size_t& end) {
  while (begin < end && text[begin] == ' ') ++begin;
  while (end > begin && text[end - 1] == ' ') --end;
}

}  // namespace

bool MemoryExpression::Mentions(const std::string& text) {
  return text.find("bs") != std::string::npos;
}

std::optional<MemoryExpression> MemoryExpression::Parse(const std::string& text,
                                                        std::string* error) {
  MemoryExpression e;
  const auto fail = [&](std::size_t at, const std::string& what) {
    *error = "memory expression \"" + text + "\": " + what + " at column " + std::to_string(at + 1);
    return std::nullopt;
  };
  std::size_t term_begin = 0;
  while (term_begin <= text.size()) {
    std::size_t term_end = text.find('+', term_begin);
    if (term_end == std::string::npos) term_end = text.size();
    Term term;
    std::size_t f_begin = term_begin;
    while (f_begin <= term_end) {
      std::size_t f_end = text.find('*', f_begin);
      if (f_end == std::string::npos || f_end > term_end) f_end = term_end;
      std::size_t b = f_begin, en = f_end;
      Trim(text, b, en);
      const std::string factor = text.substr(b, en - b);
      if (factor.empty()) return fail(b, "an empty term or factor");
      if (factor.rfind("bs", 0) == 0) {
        int power = 1;
        if (factor.size() > 2) {
          const std::string rest = factor.substr(2);
          char* stop = nullptr;
          const long p = rest[0] == '^' ? std::strtol(rest.c_str() + 1, &stop, 10) : -1;
          if (rest[0] != '^' || rest.size() < 2 || *stop != '\0' || p < 0 || p > 4) {
            return fail(b + 2, "expected bs or bs^N with N from 0 to 4");
          }
          power = static_cast<int>(p);
        }
        term.power += power;
      } else if (auto bytes = ParseSizeBytes(factor); bytes && std::isfinite(*bytes)) {
        term.coefficient *= *bytes;
      } else {
        return fail(b, "\"" + factor + "\" is neither a size (48MiB), a number nor bs");
      }
      f_begin = f_end + 1;
    }
    if (term.power > 4) return fail(term_begin, "a term above bs^4");
    e.terms_.push_back(term);
    term_begin = term_end + 1;
  }
  return e;
}

double MemoryExpression::Evaluate(double bs) const {
  double sum = 0;
  for (const Term& t : terms_) sum += t.coefficient * std::pow(bs, t.power);
  return std::max(0.0, sum);
}

}  // namespace gpuwatch::fake_nvml
