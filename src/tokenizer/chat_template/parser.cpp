#include "tokenizer/chat_template/parser.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>
#include <initializer_list>
#include <string_view>

#include "tokenizer/chat_template/builtins.h"
#include "tokenizer/chat_template/stack_guard.h"

namespace strata::chat_template {
namespace {

[[noreturn]] void syntax_error(int line, std::string message) {
    throw TemplateFailure{ErrorType::syntax_error, std::move(message), line};
}

ExprPtr make_expr(ExprKind kind, int line) {
    auto e = std::make_unique<Expr>();
    e->kind = kind;
    e->line = line;
    return e;
}

StmtPtr make_stmt(StmtKind kind, int line) {
    auto s = std::make_unique<Stmt>();
    s->kind = kind;
    s->line = line;
    return s;
}

std::string describe(const Token& t) {
    switch (t.type) {
        case TokenType::eof: return "end of template";
        case TokenType::block_end: return "end of statement block";
        case TokenType::variable_end: return "end of print statement";
        case TokenType::text: return "template data";
        default: return t.value;
    }
}

class Parser {
public:
    explicit Parser(std::vector<Token> tokens) : tokens_(std::move(tokens)) {}

    std::unique_ptr<Program> run() {
        auto program = std::make_unique<Program>();
        program->body = parse_body({});
        if (cur().type != TokenType::eof) syntax_error(cur().line, fmt::format("unexpected '{}'", cur().value));
        return program;
    }

private:
    const Token& cur() const { return tokens_[pos_]; }
    const Token& peek(size_t ahead = 1) const { return tokens_[std::min(pos_ + ahead, tokens_.size() - 1)]; }
    Token next() { return tokens_[pos_ < tokens_.size() - 1 ? pos_++ : pos_]; }
    bool is_op(std::string_view op) const { return cur().type == TokenType::op && cur().value == op; }
    bool is_name(std::string_view name) const { return cur().type == TokenType::name && cur().value == name; }
    bool skip_op(std::string_view op) {
        if (!is_op(op)) return false;
        ++pos_;
        return true;
    }
    bool skip_name(std::string_view name) {
        if (!is_name(name)) return false;
        ++pos_;
        return true;
    }
    void expect_op(std::string_view op) {
        if (!skip_op(op)) syntax_error(cur().line, fmt::format("expected token '{}', got '{}'", op, describe(cur())));
    }
    std::string expect_name() {
        if (cur().type != TokenType::name) {
            syntax_error(cur().line, fmt::format("expected token 'name', got '{}'", describe(cur())));
        }
        return next().value;
    }
    void expect_block_end() {
        if (cur().type != TokenType::block_end) {
            syntax_error(cur().line, fmt::format("expected token 'end of statement block', got '{}'", describe(cur())));
        }
        ++pos_;
    }

    // Parses template data and tags until a {% tag %} whose name is in `end_tokens`; the cursor is
    // left on that name.
    Body parse_body(std::initializer_list<std::string_view> end_tokens) {
        if (stack_.exceeded()) syntax_error(cur().line, "template nested too deeply");
        Body body;
        while (cur().type != TokenType::eof) {
            const Token& t = cur();
            if (t.type == TokenType::text) {
                auto s = make_stmt(StmtKind::text, t.line);
                s->text = t.value;
                body.push_back(std::move(s));
                ++pos_;
            } else if (t.type == TokenType::variable_begin) {
                ++pos_;
                auto s = make_stmt(StmtKind::output, t.line);
                s->expr = parse_tuple(true);
                if (cur().type != TokenType::variable_end) {
                    syntax_error(cur().line, fmt::format("expected token 'end of print statement', got '{}'", describe(cur())));
                }
                ++pos_;
                body.push_back(std::move(s));
            } else if (t.type == TokenType::block_begin) {
                ++pos_;
                for (std::string_view end : end_tokens) {
                    if (is_name(end)) return body;
                }
                body.push_back(parse_statement());
            } else {
                syntax_error(t.line, fmt::format("unexpected '{}'", describe(t)));
            }
        }
        if (end_tokens.size() > 0) {
            syntax_error(cur().line, fmt::format("Unexpected end of template. Jinja was looking for the following tags: '{}'.",
                                                 *end_tokens.begin()));
        }
        return body;
    }

    StmtPtr parse_statement() {
        int line = cur().line;
        if (cur().type != TokenType::name) syntax_error(line, "tag name expected");
        std::string tag = next().value;
        if (tag == "if") return parse_if(line);
        if (tag == "for") return parse_for(line);
        if (tag == "set") return parse_set(line);
        if (tag == "macro") return parse_macro(line);
        if (tag == "filter") return parse_filter_block(line);
        if (tag == "break" || tag == "continue") {
            if (loop_depth_ == 0) syntax_error(line, fmt::format("'{}' outside of a loop", tag));
            expect_block_end();
            return make_stmt(tag == "break" ? StmtKind::break_ : StmtKind::continue_, line);
        }
        syntax_error(line, fmt::format("Encountered unknown tag '{}'.", tag));
    }

    StmtPtr parse_if(int line) {
        auto s = make_stmt(StmtKind::if_, line);
        while (true) {
            ExprPtr cond = parse_tuple(true);
            expect_block_end();
            Body body = parse_body({"elif", "else", "endif"});
            s->branches.emplace_back(std::move(cond), std::move(body));
            std::string tag = next().value;
            if (tag == "elif") continue;
            if (tag == "else") {
                expect_block_end();
                s->else_body = parse_body({"endif"});
                next();
            }
            break;
        }
        expect_block_end();
        return s;
    }

    StmtPtr parse_for(int line) {
        auto s = make_stmt(StmtKind::for_, line);
        s->targets = parse_name_targets();
        if (!skip_name("in")) syntax_error(cur().line, "expected 'in'");
        s->expr = parse_tuple(false);  // no inline if here: `if` starts the loop filter
        if (skip_name("if")) s->loop_filter = parse_expression(true);
        if (is_name("recursive")) syntax_error(cur().line, "recursive for loops are not supported");
        expect_block_end();
        ++loop_depth_;
        s->body = parse_body({"endfor", "else"});
        --loop_depth_;
        if (next().value == "else") {
            expect_block_end();
            s->else_body = parse_body({"endfor"});
            next();
        }
        expect_block_end();
        return s;
    }

    std::vector<std::string> parse_name_targets() {
        std::vector<std::string> names;
        bool paren = skip_op("(");
        do {
            names.push_back(expect_name());
        } while (skip_op(",") && cur().type == TokenType::name);
        if (paren) expect_op(")");
        return names;
    }

    StmtPtr parse_set(int line) {
        auto s = make_stmt(StmtKind::set, line);
        if (cur().type == TokenType::name && peek().type == TokenType::op && peek().value == ".") {
            s->targets.push_back(next().value);
            ++pos_;
            s->namespace_attribute = expect_name();
        } else {
            s->targets = parse_name_targets();
        }
        if (skip_op("=")) {
            s->expr = parse_tuple(true);
            expect_block_end();
            return s;
        }
        if (!s->namespace_attribute.empty() || s->targets.size() != 1) {
            syntax_error(line, "expected token '=' in set");
        }
        s->kind = StmtKind::set_block;
        while (skip_op("|")) s->filters.push_back(parse_filter(nullptr));
        expect_block_end();
        s->body = parse_body({"endset"});
        next();
        expect_block_end();
        return s;
    }

    StmtPtr parse_macro(int line) {
        auto s = make_stmt(StmtKind::macro, line);
        s->name = expect_name();
        expect_op("(");
        while (!is_op(")")) {
            if (!s->params.empty()) expect_op(",");
            if (is_op(")")) break;
            s->params.push_back(expect_name());
            s->defaults.push_back(skip_op("=") ? parse_expression(true) : nullptr);
        }
        expect_op(")");
        expect_block_end();
        int saved_loop_depth = loop_depth_;
        loop_depth_ = 0;
        s->body = parse_body({"endmacro"});
        loop_depth_ = saved_loop_depth;
        next();
        if (cur().type == TokenType::name) next();  // {% endmacro name %}
        expect_block_end();
        return s;
    }

    StmtPtr parse_filter_block(int line) {
        auto s = make_stmt(StmtKind::filter_block, line);
        s->filters.push_back(parse_filter(nullptr));
        while (skip_op("|")) s->filters.push_back(parse_filter(nullptr));
        expect_block_end();
        s->body = parse_body({"endfilter"});
        next();
        expect_block_end();
        return s;
    }

    // ---- expressions ----

    // A comma-separated list becomes a tuple ("{{ a, b }}"); a single expression stays itself.
    ExprPtr parse_tuple(bool with_condexpr) {
        int line = cur().line;
        ExprPtr first = with_condexpr ? parse_expression(true) : parse_or();
        if (!is_op(",")) return first;
        auto t = make_expr(ExprKind::tuple, line);
        t->args.push_back(std::move(first));
        while (skip_op(",")) {
            if (!starts_expression()) break;
            t->args.push_back(with_condexpr ? parse_expression(true) : parse_or());
        }
        return t;
    }

    bool starts_expression() const {
        const Token& t = cur();
        if (t.type == TokenType::name || t.type == TokenType::string || t.type == TokenType::integer ||
            t.type == TokenType::floating) {
            return true;
        }
        return t.type == TokenType::op && (t.value == "(" || t.value == "[" || t.value == "{" || t.value == "-" ||
                                           t.value == "+");
    }

    ExprPtr parse_expression(bool with_condexpr) {
        if (stack_.exceeded()) syntax_error(cur().line, "template nested too deeply");
        if (!with_condexpr) return parse_or();
        ExprPtr expr = parse_or();
        while (is_name("if")) {
            int line = next().line;
            auto c = make_expr(ExprKind::condition, line);
            c->target = parse_or();
            c->args.push_back(std::move(expr));
            c->args.push_back(skip_name("else") ? parse_expression(true) : nullptr);
            expr = std::move(c);
        }
        return expr;
    }

    ExprPtr binary(std::string op, ExprPtr left, ExprPtr right, int line) {
        auto b = make_expr(ExprKind::binary, line);
        b->name = std::move(op);
        b->target = std::move(left);
        b->args.push_back(std::move(right));
        return b;
    }

    ExprPtr parse_or() {
        ExprPtr left = parse_and();
        while (is_name("or")) {
            int line = next().line;
            left = binary("or", std::move(left), parse_and(), line);
        }
        return left;
    }

    ExprPtr parse_and() {
        ExprPtr left = parse_not();
        while (is_name("and")) {
            int line = next().line;
            left = binary("and", std::move(left), parse_not(), line);
        }
        return left;
    }

    ExprPtr parse_not() {
        if (stack_.exceeded()) syntax_error(cur().line, "template nested too deeply");
        if (is_name("not")) {
            auto u = make_expr(ExprKind::unary, next().line);
            u->name = "not";
            u->target = parse_not();
            return u;
        }
        return parse_compare();
    }

    ExprPtr parse_compare() {
        int line = cur().line;
        ExprPtr first = parse_math1();
        auto c = make_expr(ExprKind::compare, line);
        while (true) {
            const Token& t = cur();
            if (t.type == TokenType::op &&
                (t.value == "==" || t.value == "!=" || t.value == "<" || t.value == "<=" || t.value == ">" ||
                 t.value == ">=")) {
                c->ops.push_back(next().value);
            } else if (skip_name("in")) {
                c->ops.push_back("in");
            } else if (is_name("not") && peek().type == TokenType::name && peek().value == "in") {
                pos_ += 2;
                c->ops.push_back("notin");
            } else {
                break;
            }
            c->args.push_back(parse_math1());
        }
        if (c->ops.empty()) return first;
        c->target = std::move(first);
        return c;
    }

    ExprPtr parse_math1() {
        ExprPtr left = parse_concat();
        while (is_op("+") || is_op("-")) {
            Token op = next();
            left = binary(op.value, std::move(left), parse_concat(), op.line);
        }
        return left;
    }

    ExprPtr parse_concat() {
        ExprPtr left = parse_math2();
        while (is_op("~")) {
            int line = next().line;
            left = binary("~", std::move(left), parse_math2(), line);
        }
        return left;
    }

    ExprPtr parse_math2() {
        ExprPtr left = parse_pow();
        while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
            Token op = next();
            left = binary(op.value, std::move(left), parse_pow(), op.line);
        }
        return left;
    }

    ExprPtr parse_pow() {
        ExprPtr left = parse_unary(true);
        while (is_op("**")) {
            int line = next().line;
            left = binary("**", std::move(left), parse_unary(true), line);
        }
        return left;
    }

    ExprPtr parse_unary(bool with_filter) {
        if (stack_.exceeded()) syntax_error(cur().line, "template nested too deeply");
        ExprPtr node;
        if (is_op("-") || is_op("+")) {
            Token op = next();
            node = make_expr(ExprKind::unary, op.line);
            node->name = op.value;
            node->target = parse_unary(false);
        } else {
            node = parse_primary();
        }
        node = parse_postfix(std::move(node));
        if (with_filter) node = parse_filter_expr(std::move(node));
        return node;
    }

    ExprPtr parse_primary() {
        Token t = next();
        switch (t.type) {
            case TokenType::name: {
                if (t.value == "true" || t.value == "True" || t.value == "false" || t.value == "False") {
                    auto e = make_expr(ExprKind::literal, t.line);
                    e->literal = Value(t.value == "true" || t.value == "True");
                    return e;
                }
                if (t.value == "none" || t.value == "None") return make_expr(ExprKind::literal, t.line);
                auto e = make_expr(ExprKind::name, t.line);
                e->name = t.value;
                return e;
            }
            case TokenType::string: {
                std::string s = t.value;
                while (cur().type == TokenType::string) s += next().value;  // adjacent literals join
                auto e = make_expr(ExprKind::literal, t.line);
                e->literal = Value(std::move(s));
                return e;
            }
            case TokenType::integer: {
                auto e = make_expr(ExprKind::literal, t.line);
                errno = 0;
                const long long v = std::strtoll(t.value.c_str(), nullptr, 10);
                if (errno == ERANGE) syntax_error(t.line, fmt::format("integer literal {} does not fit in 64 bits", t.value));
                e->literal = Value(static_cast<int64_t>(v));
                return e;
            }
            case TokenType::floating: {
                auto e = make_expr(ExprKind::literal, t.line);
                // Like Python, a float literal too large is inf (strtod does not throw as stod does).
                e->literal = Value(std::strtod(t.value.c_str(), nullptr));
                return e;
            }
            case TokenType::op:
                if (t.value == "(") {
                    if (skip_op(")")) return make_expr(ExprKind::tuple, t.line);
                    ExprPtr inner = parse_expression(true);
                    if (is_op(",")) {
                        auto tuple = make_expr(ExprKind::tuple, t.line);
                        tuple->args.push_back(std::move(inner));
                        while (skip_op(",") && !is_op(")")) tuple->args.push_back(parse_expression(true));
                        inner = std::move(tuple);
                    }
                    expect_op(")");
                    return inner;
                }
                if (t.value == "[") {
                    auto list = make_expr(ExprKind::list, t.line);
                    while (!is_op("]")) {
                        if (!list->args.empty()) expect_op(",");
                        if (is_op("]")) break;
                        list->args.push_back(parse_expression(true));
                    }
                    expect_op("]");
                    return list;
                }
                if (t.value == "{") {
                    auto dict = make_expr(ExprKind::dict, t.line);
                    while (!is_op("}")) {
                        if (!dict->args.empty()) expect_op(",");
                        if (is_op("}")) break;
                        dict->args.push_back(parse_expression(true));
                        expect_op(":");
                        dict->args.push_back(parse_expression(true));
                    }
                    expect_op("}");
                    return dict;
                }
                break;
            default: break;
        }
        syntax_error(t.line, fmt::format("unexpected '{}'", describe(t)));
    }

    ExprPtr parse_postfix(ExprPtr node) {
        while (true) {
            if (is_op(".")) {
                int line = next().line;
                if (cur().type == TokenType::integer) {
                    auto e = make_expr(ExprKind::subscript, line);
                    e->target = std::move(node);
                    e->args.push_back(parse_primary());
                    node = std::move(e);
                    continue;
                }
                auto e = make_expr(ExprKind::attribute, line);
                e->target = std::move(node);
                e->name = expect_name();
                node = std::move(e);
            } else if (is_op("[")) {
                node = parse_subscript(std::move(node));
            } else if (is_op("(")) {
                node = parse_call(std::move(node));
            } else {
                return node;
            }
        }
    }

    ExprPtr parse_subscript(ExprPtr node) {
        int line = next().line;
        ExprPtr bounds[3];
        bool is_slice = false;
        for (int part = 0; part < 3; ++part) {
            if (!is_op(":") && !is_op("]")) bounds[part] = parse_expression(true);
            if (part < 2 && skip_op(":")) {
                is_slice = true;
                continue;
            }
            break;
        }
        expect_op("]");
        auto e = make_expr(is_slice ? ExprKind::slice : ExprKind::subscript, line);
        e->target = std::move(node);
        if (is_slice) {
            for (auto& b : bounds) e->args.push_back(std::move(b));
        } else {
            if (!bounds[0]) syntax_error(line, "expected subscript expression");
            e->args.push_back(std::move(bounds[0]));
        }
        return e;
    }

    void parse_call_args(Expr& e) {
        expect_op("(");
        while (!is_op(")")) {
            if (!e.args.empty() || !e.kwargs.empty()) expect_op(",");
            if (is_op(")")) break;
            if (cur().type == TokenType::name && peek().type == TokenType::op && peek().value == "=") {
                std::string key = next().value;
                ++pos_;
                e.kwargs.emplace_back(std::move(key), parse_expression(true));
            } else {
                if (!e.kwargs.empty()) syntax_error(cur().line, "invalid syntax for function call expression");
                e.args.push_back(parse_expression(true));
            }
        }
        expect_op(")");
    }

    ExprPtr parse_call(ExprPtr node) {
        auto e = make_expr(ExprKind::call, cur().line);
        e->target = std::move(node);
        parse_call_args(*e);
        return e;
    }

    ExprPtr parse_filter(ExprPtr target) {
        auto f = make_expr(ExprKind::filter, cur().line);
        f->target = std::move(target);
        f->name = expect_name();
        while (skip_op(".")) f->name += "." + expect_name();
        f->unknown_builtin = find_filter(f->name) == nullptr;
        if (is_op("(")) parse_call_args(*f);
        return f;
    }

    ExprPtr parse_filter_expr(ExprPtr node) {
        while (true) {
            if (skip_op("|")) {
                node = parse_filter(std::move(node));
            } else if (is_name("is")) {
                int line = next().line;
                auto t = make_expr(ExprKind::test, line);
                t->negated = skip_name("not");
                t->name = expect_name();
                t->unknown_builtin = find_test(t->name) == nullptr;
                t->target = std::move(node);
                if (is_op("(")) {
                    parse_call_args(*t);
                } else if ((cur().type == TokenType::name || cur().type == TokenType::string ||
                            cur().type == TokenType::integer || cur().type == TokenType::floating ||
                            is_op("(") || is_op("[") || is_op("{")) &&
                           !is_name("else") && !is_name("or") && !is_name("and")) {
                    // `x is divisibleby 3`, `x is equalto "a"`: one bare argument.
                    t->args.push_back(parse_postfix(parse_primary()));
                }
                node = std::move(t);
            } else if (is_op("(")) {
                node = parse_call(std::move(node));
            } else {
                return node;
            }
        }
    }

    std::vector<Token> tokens_;
    size_t pos_ = 0;
    int loop_depth_ = 0;
    StackGuard stack_;  // the parse starts with the Parser
};

// Jinja fails at compile time on an unknown filter or test, except inside an {% if %} (its test
// and its own bodies) or an inline `a if b else c`, where the error waits until the filter runs.
// Nested for/macro/filter bodies get a fresh frame and are strict again (compiler.py Frame.soft).
void check_expr(const Expr* e, bool soft) {
    if (!e) return;
    if (e->unknown_builtin && !soft) {
        throw TemplateFailure{ErrorType::assertion_error,
                              fmt::format("No {} named '{}'.", e->kind == ExprKind::filter ? "filter" : "test", e->name),
                              e->line};
    }
    bool inner_soft = soft || e->kind == ExprKind::condition;
    check_expr(e->target.get(), inner_soft);
    for (const auto& a : e->args) check_expr(a.get(), inner_soft);
    for (const auto& kw : e->kwargs) check_expr(kw.second.get(), inner_soft);
}

void check_body(const Body& body, bool soft) {
    for (const auto& s : body) {
        check_expr(s->expr.get(), soft);
        check_expr(s->loop_filter.get(), false);
        for (const auto& f : s->filters) check_expr(f.get(), false);
        for (const auto& d : s->defaults) check_expr(d.get(), false);
        for (const auto& [cond, branch] : s->branches) {
            check_expr(cond.get(), true);
            check_body(branch, true);
        }
        check_body(s->else_body, s->kind == StmtKind::if_);
        check_body(s->body, false);
    }
}

}  // namespace

std::unique_ptr<Program> parse_program(std::vector<Token> tokens) {
    std::unique_ptr<Program> program = Parser(std::move(tokens)).run();
    check_body(program->body, false);
    return program;
}

}  // namespace strata::chat_template
