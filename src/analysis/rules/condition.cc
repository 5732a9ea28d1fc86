#include "analysis/rules/condition.h"

#include <fmt/format.h>

#include <cctype>
#include <utility>

#include "analysis/rules/quantity.h"

namespace gpuwatch::rules {
namespace {

constexpr int kMaxDepth = 32;

struct Token {
  enum class Kind : std::uint8_t { kEnd, kWord, kNumber, kOp, kLParen, kRParen };
  Kind kind = Kind::kEnd;
  std::string_view text;
  std::size_t offset = 0;
};

bool IsWordStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool IsWordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool IsNumberStart(char c) {
  return std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == '-';
}
// A number runs on through its unit suffix: "90%", "8GiB", "80°C", "1GB/s".
bool IsQuantityChar(char c) {
  auto u = static_cast<unsigned char>(c);
  return std::isalnum(u) || c == '.' || c == '%' || c == '/' || c == '_' || u >= 0x80;
}

class Parser {
 public:
  Parser(std::string_view text, RuleScope scope) : text_(text), scope_(scope) {}

  Result<Condition> Parse(std::size_t* error_offset) {
    Result<Condition> c = ParseOr(0);
    if (c && Peek().kind != Token::Kind::kEnd) {
      c = Fail(Peek().offset,
               fmt::format("expected 'and', 'or' or the end, found '{}'", Peek().text));
    }
    if (!c) *error_offset = error_offset_;
    return c;
  }

 private:
  Status Fail(std::size_t offset, std::string msg) {
    error_offset_ = offset;
    return Status::InvalidArgument(std::move(msg));
  }

  Token Peek() {
    if (!peeked_) {
      next_ = Lex();
      peeked_ = true;
    }
    return next_;
  }
  Token Take() {
    Token t = Peek();
    peeked_ = false;
    return t;
  }

  Token Lex() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    Token t;
    t.offset = pos_;
    if (pos_ >= text_.size()) return t;
    char c = text_[pos_];
    std::size_t start = pos_;
    if (IsWordStart(c)) {
      while (pos_ < text_.size() && IsWordChar(text_[pos_])) ++pos_;
      t.kind = Token::Kind::kWord;
    } else if (IsNumberStart(c)) {
      ++pos_;
      while (pos_ < text_.size() && IsQuantityChar(text_[pos_])) ++pos_;
      t.kind = Token::Kind::kNumber;
    } else if (c == '(' || c == ')') {
      ++pos_;
      t.kind = c == '(' ? Token::Kind::kLParen : Token::Kind::kRParen;
    } else if (c == '<' || c == '>' || c == '=' || c == '!') {
      ++pos_;
      if (pos_ < text_.size() && text_[pos_] == '=') ++pos_;
      t.kind = Token::Kind::kOp;
    } else {
      ++pos_;
      t.kind = Token::Kind::kOp;  // rejected by the grammar with its position
    }
    t.text = text_.substr(start, pos_ - start);
    return t;
  }

  static bool IsKeyword(const Token& t, std::string_view word) {
    return t.kind == Token::Kind::kWord && t.text == word;
  }

  Result<Condition> ParseOr(int depth) { return ParseJoin(depth, "or", Condition::Kind::kOr); }

  Result<Condition> ParseJoin(int depth, std::string_view word, Condition::Kind kind) {
    Result<Condition> first = kind == Condition::Kind::kOr
                                  ? ParseJoin(depth, "and", Condition::Kind::kAnd)
                                  : ParseUnary(depth);
    if (!first || !IsKeyword(Peek(), word)) return first;
    Condition joined;
    joined.kind = kind;
    joined.children.push_back(std::move(*first));
    while (IsKeyword(Peek(), word)) {
      Take();
      Result<Condition> next = kind == Condition::Kind::kOr
                                   ? ParseJoin(depth, "and", Condition::Kind::kAnd)
                                   : ParseUnary(depth);
      if (!next) return next;
      joined.children.push_back(std::move(*next));
    }
    return joined;
  }

  Result<Condition> ParseUnary(int depth) {
    if (depth > kMaxDepth) return Fail(Peek().offset, "condition nests too deeply");
    Token t = Peek();
    if (IsKeyword(t, "not")) {
      Take();
      Result<Condition> inner = ParseUnary(depth + 1);
      if (!inner) return inner;
      Condition n;
      n.kind = Condition::Kind::kNot;
      n.children.push_back(std::move(*inner));
      return n;
    }
    if (t.kind == Token::Kind::kLParen) {
      Take();
      Result<Condition> inner = ParseOr(depth + 1);
      if (!inner) return inner;
      if (Peek().kind != Token::Kind::kRParen) {
        return Fail(Peek().offset, fmt::format("expected ')', found '{}'", Describe(Peek())));
      }
      Take();
      return inner;
    }
    return ParseComparison();
  }

  static std::string Describe(const Token& t) {
    return t.kind == Token::Kind::kEnd ? std::string("the end") : std::string(t.text);
  }

  Result<Condition> ParseComparison() {
    Token name = Take();
    if (name.kind != Token::Kind::kWord || IsKeyword(name, "and") || IsKeyword(name, "or")) {
      return Fail(name.offset, fmt::format("expected a field name, found '{}'", Describe(name)));
    }
    std::optional<FieldRef> field = FindRuleField(name.text, scope_);
    if (!field) {
      std::string why;
      std::optional<FieldId> id = FindByKey(name.text);
      if (id && Info(*id).unit == Unit::kText) {
        why = fmt::format("field '{}' is text and cannot be compared", name.text);
      } else if (id && Info(*id).scope == Scope::kProcess) {
        why = fmt::format("field '{}' is a process field: set 'scope: process'", name.text);
      } else if (id) {
        why =
            fmt::format("field '{}' is a host field; rules watch devices and processes", name.text);
      } else {
        why = fmt::format("unknown field '{}'", name.text);
      }
      return Fail(name.offset, fmt::format("{}; valid fields for a {} rule: {}", why,
                                           RuleScopeName(scope_), ValidFieldList(scope_)));
    }
    Token op = Take();
    std::optional<CompareOp> cmp;
    if (op.kind == Token::Kind::kOp) {
      if (op.text == "<") cmp = CompareOp::kLess;
      if (op.text == "<=") cmp = CompareOp::kLessEqual;
      if (op.text == ">") cmp = CompareOp::kGreater;
      if (op.text == ">=") cmp = CompareOp::kGreaterEqual;
      if (op.text == "==") cmp = CompareOp::kEqual;
      if (op.text == "!=") cmp = CompareOp::kNotEqual;
    }
    if (!cmp) {
      return Fail(op.offset, fmt::format("expected one of < <= > >= == != after '{}', found '{}'",
                                         name.text, Describe(op)));
    }
    Token number = Take();
    if (number.kind != Token::Kind::kNumber) {
      return Fail(number.offset, fmt::format("expected a number after '{}', found '{}'", op.text,
                                             Describe(number)));
    }
    Result<double> value = ParseQuantity(number.text, field->unit());
    if (!value) {
      return Fail(number.offset,
                  fmt::format("{} (field '{}')", value.error().message(), name.text));
    }
    Condition c;
    c.kind = Condition::Kind::kCompare;
    c.field = *field;
    c.op = *cmp;
    c.threshold = *value;
    c.threshold_text = std::string(number.text);
    return c;
  }

  std::string_view text_;
  RuleScope scope_;
  std::size_t pos_ = 0;
  bool peeked_ = false;
  Token next_;
  std::size_t error_offset_ = 0;
};

bool Compare(double v, CompareOp op, double t) {
  switch (op) {
    case CompareOp::kLess:
      return v < t;
    case CompareOp::kLessEqual:
      return v <= t;
    case CompareOp::kGreater:
      return v > t;
    case CompareOp::kGreaterEqual:
      return v >= t;
    case CompareOp::kEqual:
      return v == t;
    case CompareOp::kNotEqual:
      return v != t;
  }
  return false;
}

}  // namespace

std::string_view CompareOpText(CompareOp op) {
  switch (op) {
    case CompareOp::kLess:
      return "<";
    case CompareOp::kLessEqual:
      return "<=";
    case CompareOp::kGreater:
      return ">";
    case CompareOp::kGreaterEqual:
      return ">=";
    case CompareOp::kEqual:
      return "==";
    case CompareOp::kNotEqual:
      return "!=";
  }
  return "?";
}

Truth Condition::Evaluate(const EvalContext& ctx) const {
  switch (kind) {
    case Kind::kCompare: {
      std::optional<double> v = ValueOf(field, ctx);
      if (!v) return Truth::kUnknown;
      return Compare(*v, op, threshold) ? Truth::kTrue : Truth::kFalse;
    }
    case Kind::kNot: {
      Truth t = children.front().Evaluate(ctx);
      if (t == Truth::kUnknown) return t;
      return t == Truth::kTrue ? Truth::kFalse : Truth::kTrue;
    }
    case Kind::kAnd:
    case Kind::kOr: {
      const Truth decisive = kind == Kind::kAnd ? Truth::kFalse : Truth::kTrue;
      bool unknown = false;
      for (const Condition& c : children) {
        Truth t = c.Evaluate(ctx);
        if (t == decisive) return decisive;
        unknown = unknown || t == Truth::kUnknown;
      }
      if (unknown) return Truth::kUnknown;
      return kind == Kind::kAnd ? Truth::kTrue : Truth::kFalse;
    }
  }
  return Truth::kUnknown;
}

std::string Condition::ToString() const {
  switch (kind) {
    case Kind::kCompare:
      return fmt::format("{} {} {}", field.key(), CompareOpText(op), threshold_text);
    case Kind::kNot:
      return "not (" + children.front().ToString() + ")";
    case Kind::kAnd:
    case Kind::kOr: {
      std::string out;
      for (const Condition& c : children) {
        if (!out.empty()) out += kind == Kind::kAnd ? " and " : " or ";
        bool wrap = c.kind == Kind::kAnd || c.kind == Kind::kOr;
        out += wrap ? "(" + c.ToString() + ")" : c.ToString();
      }
      return out;
    }
  }
  return {};
}

const FieldRef& Condition::PrimaryField() const {
  return kind == Kind::kCompare ? field : children.front().PrimaryField();
}

Condition Negate(Condition c) {
  Condition n;
  n.kind = Condition::Kind::kNot;
  n.children.push_back(std::move(c));
  return n;
}

Result<Condition> ParseCondition(std::string_view text, RuleScope scope,
                                 std::size_t* error_offset) {
  Parser p(text, scope);
  return p.Parse(error_offset);
}

}  // namespace gpuwatch::rules
