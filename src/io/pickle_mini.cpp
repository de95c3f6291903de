// A pickle reader that executes nothing and a protocol 2 writer (pickle_mini.hpp). Opcodes are
// Python's (Lib/pickletools.py documents each one).
#include "io/pickle_mini.hpp"

#include <cstring>

#include "tapegrad/error.hpp"

namespace tg::io_detail {

const char* py_kind_name(PyObj::Kind k) {
    switch (k) {
        case PyObj::Kind::None:
            return "None";
        case PyObj::Kind::Bool:
            return "a bool";
        case PyObj::Kind::Int:
            return "an int";
        case PyObj::Kind::Float:
            return "a float";
        case PyObj::Kind::String:
            return "a string";
        case PyObj::Kind::Tuple:
            return "a tuple";
        case PyObj::Kind::List:
            return "a list";
        case PyObj::Kind::Dict:
            return "a dict";
        case PyObj::Kind::Global:
            return "a global";
        case PyObj::Kind::Storage:
            return "a storage";
        case PyObj::Kind::Tensor:
            return "a tensor";
    }
    return "?";
}

void PickleReader::fail(const std::string& what) const {
    throw io_error(where_ + ": pickle: " + what + " (at byte " + std::to_string(pos_) + ")");
}

const uint8_t* PickleReader::take(size_t k) {
    if (k > n_ - pos_)
        fail("truncated: an opcode needs " + std::to_string(k) + " more bytes");
    const uint8_t* at = p_ + pos_;
    pos_ += k;
    return at;
}

uint64_t PickleReader::le(size_t k) {
    const uint8_t* b = take(k);
    uint64_t v = 0;
    for (size_t i = k; i-- > 0;)
        v = (v << 8) | b[i];
    return v;
}

PyObj* PickleReader::make(PyObj::Kind k) {
    arena_.emplace_back();
    arena_.back().kind = k;
    return &arena_.back();
}

PyObj* PickleReader::pop() {
    if (stack_.size() <= (marks_.empty() ? 0 : marks_.back()))
        fail("stack underflow");
    PyObj* o = stack_.back();
    stack_.pop_back();
    return o;
}

std::vector<PyObj*> PickleReader::pop_mark() {
    if (marks_.empty())
        fail("no MARK to pop to");
    std::vector<PyObj*> items(stack_.begin() + std::ptrdiff_t(marks_.back()), stack_.end());
    stack_.resize(marks_.back());
    marks_.pop_back();
    return items;
}

void PickleReader::set_item(PyObj* dict, PyObj* key, PyObj* value) {
    if (dict->kind != PyObj::Kind::Dict)
        fail(std::string("SETITEM on ") + py_kind_name(dict->kind));
    std::string k;
    if (key->kind == PyObj::Kind::String)
        k = "s" + key->text;
    else if (key->kind == PyObj::Kind::Int)
        k = "i" + std::to_string(key->integer);
    else
        fail(std::string("a dict key that is ") + py_kind_name(key->kind));
    auto [it, fresh] = dict->index.emplace(k, dict->entries.size());
    if (fresh)
        dict->entries.emplace_back(key, value);
    else
        dict->entries[it->second].second = value;  // as Python: the first key, the last value
}

PyObj* PickleReader::string(size_t len) {
    PyObj* s = make(PyObj::Kind::String);
    const uint8_t* b = take(len);
    s->text.assign(reinterpret_cast<const char*>(b), len);
    return s;
}

PyObj* PickleReader::load() {
    auto push = [&](PyObj* o) { stack_.push_back(o); };
    auto integer = [&](int64_t v) {
        PyObj* o = make(PyObj::Kind::Int);
        o->integer = v;
        push(o);
    };
    auto line = [&]() {
        const void* nl = std::memchr(p_ + pos_, '\n', n_ - pos_);
        if (!nl)
            fail("GLOBAL without its newline");
        const size_t len = size_t(static_cast<const uint8_t*>(nl) - (p_ + pos_));
        std::string s(reinterpret_cast<const char*>(take(len)), len);
        take(1);
        return s;
    };
    auto global = [&](const std::string& module, const std::string& name) {
        if (!hooks_.allow_global(module, name))
            fail("refuses the global " + module + "." + name +
                 " (a state dict needs only torch's tensor and storage types and "
                 "collections.OrderedDict; nothing else is executed)");
        PyObj* g = make(PyObj::Kind::Global);
        g->text = module + "." + name;
        push(g);
    };
    auto tuple_of = [&](std::vector<PyObj*> items) {
        PyObj* t = make(PyObj::Kind::Tuple);
        t->items = std::move(items);
        push(t);
    };
    for (;;) {
        const uint8_t op = *take(1);
        switch (op) {
            case 0x80: {  // PROTO
                const uint8_t v = *take(1);
                if (v < 2 || v > 5)
                    fail("protocol " + std::to_string(v) + " (2 to 5 are read)");
                break;
            }
            case 0x95:
                take(8);
                break;   // FRAME: a hint only
            case '.': {  // STOP
                if (stack_.size() != 1 || !marks_.empty())
                    fail("STOP with " + std::to_string(stack_.size()) + " objects on the stack");
                return stack_.back();
            }
            case '(':
                marks_.push_back(stack_.size());
                break;
            case '0':
                pop();
                break;
            case '1':
                pop_mark();
                break;
            case '2': {
                PyObj* top = pop();
                push(top);
                push(top);
                break;
            }
            case 'N':
                push(make(PyObj::Kind::None));
                break;
            case 0x88:
            case 0x89: {
                PyObj* b = make(PyObj::Kind::Bool);
                b->flag = op == 0x88;
                push(b);
                break;
            }
            case 'K':
                integer(int64_t(le(1)));
                break;
            case 'M':
                integer(int64_t(le(2)));
                break;
            case 'J':
                integer(int64_t(int32_t(uint32_t(le(4)))));
                break;
            case 0x8a: {  // LONG1: n bytes of two's complement
                const size_t n = *take(1);
                if (n > 8)
                    fail("an int of " + std::to_string(n) + " bytes (at most 8 are read)");
                uint64_t v = n ? le(n) : 0;
                if (n > 0 && n < 8 && (v >> (8 * n - 1)) & 1)
                    v |= ~uint64_t(0) << (8 * n);  // sign-extend
                integer(int64_t(v));
                break;
            }
            case 'G': {  // BINFLOAT: big-endian double
                const uint8_t* b = take(8);
                uint64_t bits = 0;
                for (int i = 0; i < 8; ++i)
                    bits = (bits << 8) | b[i];
                PyObj* f = make(PyObj::Kind::Float);
                std::memcpy(&f->real, &bits, 8);
                push(f);
                break;
            }
            case 'X':
                push(string(size_t(le(4))));
                break;
            case 0x8c:
                push(string(size_t(le(1))));
                break;
            case 0x8d: {
                const uint64_t len = le(8);
                if (len > n_)
                    fail("a string longer than the pickle");
                push(string(size_t(len)));
                break;
            }
            case 'U':
                push(string(size_t(le(1))));
                break;
            case 'T': {
                const int32_t len = int32_t(uint32_t(le(4)));
                if (len < 0)
                    fail("a negative string length");
                push(string(size_t(len)));
                break;
            }
            case ')':
                tuple_of({});
                break;
            case 0x85:
            case 0x86:
            case 0x87: {
                std::vector<PyObj*> items(size_t(op - 0x84));
                for (size_t i = items.size(); i-- > 0;)
                    items[i] = pop();
                tuple_of(std::move(items));
                break;
            }
            case 't':
                tuple_of(pop_mark());
                break;
            case ']':
                push(make(PyObj::Kind::List));
                break;
            case 'l': {
                PyObj* l = make(PyObj::Kind::List);
                l->items = pop_mark();
                push(l);
                break;
            }
            case 'a':
            case 'e': {
                std::vector<PyObj*> items = op == 'a' ? std::vector<PyObj*>{pop()} : pop_mark();
                PyObj* l = pop();
                if (l->kind != PyObj::Kind::List)
                    fail(std::string("APPEND to ") + py_kind_name(l->kind));
                l->items.insert(l->items.end(), items.begin(), items.end());
                push(l);
                break;
            }
            case '}':
                push(make(PyObj::Kind::Dict));
                break;
            case 'd':
            case 'u':
            case 's': {
                std::vector<PyObj*> kv;
                if (op == 's') {
                    kv.resize(2);
                    kv[1] = pop();
                    kv[0] = pop();
                } else {
                    kv = pop_mark();
                }
                if (kv.size() % 2)
                    fail("an odd number of keys and values");
                PyObj* d = op == 'd' ? make(PyObj::Kind::Dict) : pop();
                for (size_t i = 0; i < kv.size(); i += 2)
                    set_item(d, kv[i], kv[i + 1]);
                push(d);
                break;
            }
            case 'q':
            case 'r':
            case 0x94: {
                const uint64_t key = op == 'q' ? le(1) : op == 'r' ? le(4) : memo_.size();
                PyObj* top = pop();
                push(top);
                memo_[key] = top;
                break;
            }
            case 'h':
            case 'j': {
                auto it = memo_.find(op == 'h' ? le(1) : le(4));
                if (it == memo_.end())
                    fail("a memo entry that was never stored");
                push(it->second);
                break;
            }
            case 'c': {
                const std::string module = line();
                global(module, line());
                break;
            }
            case 0x93: {  // STACK_GLOBAL
                PyObj* name = pop();
                PyObj* module = pop();
                if (name->kind != PyObj::Kind::String || module->kind != PyObj::Kind::String)
                    fail("STACK_GLOBAL of something else than two strings");
                global(module->text, name->text);
                break;
            }
            case 'R': {
                PyObj* args = pop();
                PyObj* f = pop();
                if (f->kind != PyObj::Kind::Global || args->kind != PyObj::Kind::Tuple)
                    fail(std::string("REDUCE calls ") + py_kind_name(f->kind) + " with " +
                         py_kind_name(args->kind));
                if (f->text == "collections.OrderedDict") {
                    if (!args->items.empty())
                        fail("OrderedDict called with arguments");
                    PyObj* d = make(PyObj::Kind::Dict);
                    d->flag = true;
                    push(d);
                } else {
                    push(hooks_.reduce(*this, f, args));
                }
                break;
            }
            case 'b': {  // BUILD: only a dict's attributes (a state dict's _metadata), ignored
                PyObj* state = pop();
                PyObj* target = pop();
                if (target->kind != PyObj::Kind::Dict || state->kind != PyObj::Kind::Dict)
                    fail(std::string("BUILD of ") + py_kind_name(target->kind) + " from " +
                         py_kind_name(state->kind) + " (only a dict's attributes are read)");
                push(target);
                break;
            }
            case 'Q': {
                PyObj* pid = pop();
                push(hooks_.persistent_load(*this, pid));
                break;
            }
            default: {
                static const char hex[] = "0123456789abcdef";
                fail(std::string("unknown or unsupported opcode 0x") + hex[op >> 4] + hex[op & 15]);
            }
        }
    }
}

}  // namespace tg::io_detail
