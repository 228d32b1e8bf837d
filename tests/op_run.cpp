// Running an op case on a backend: its tensors in device memory between guard bytes, the
// outputs read back and judged against serial's, and the finite-difference gradient check.
#include <cmath>
#include <cstring>
#include <sstream>

#include "core/check.hpp"
#include "tests/compare.hpp"
#include "tests/op_table.hpp"

namespace pcnn::test {

namespace {

constexpr size_t kGuard = 256;          // bytes on each side of a tensor: keeps the alignment
constexpr uint8_t kGuardByte = 0xA5;    // as a float: -2.9e-16, nothing a kernel writes
constexpr uint32_t kPoisonBits = 0x7fc00000u;  // quiet NaN (and a nonsense int32)

size_t element_size(DType t) {
  return t == DType::U8 ? 1 : t == DType::U16 || t == DType::BF16 || t == DType::F16 ? 2 : 4;
}
bool is_16bit_value(DType t) { return t == DType::BF16 || t == DType::F16; }
Precision precision_of(DType t) { return t == DType::BF16 ? Precision::BF16 : Precision::F16; }
size_t image_size(const TensorSpec& s) {
  return 2 * kGuard + (s.offset + s.size) * element_size(s.type);
}
size_t body_start(const TensorSpec& s) { return kGuard + s.offset * element_size(s.type); }

// The bytes a tensor holds on the device, guards included: initial values, or poison.
std::vector<uint8_t> device_image(const TensorSpec& s) {
  const size_t es = element_size(s.type);
  std::vector<uint8_t> bytes(image_size(s), kGuardByte);
  uint8_t* body = bytes.data() + body_start(s);
  if (s.role == Role::Out || s.role == Role::Scratch) {
    for (size_t i = 0; i < s.size * es; ++i) body[i] = uint8_t(kPoisonBits >> (8 * (i % 4)));
    return bytes;
  }
  PCNN_CHECK(s.init.size() == s.size, "tensor " << s.name << ": " << s.init.size()
                                                << " initial values for " << s.size << " elements");
  for (size_t i = 0; i < s.size; ++i) {
    if (s.type == DType::F32) {
      std::memcpy(body + 4 * i, &s.init[i], 4);
    } else if (s.type == DType::I32) {
      const int32_t v = int32_t(s.init[i]);
      std::memcpy(body + 4 * i, &v, 4);
    } else if (s.type == DType::U16) {
      const uint16_t v = uint16_t(s.init[i]);
      std::memcpy(body + 2 * i, &v, 2);
    } else if (is_16bit_value(s.type)) {
      const uint16_t v = round_to_storage(precision_of(s.type), s.init[i]);
      std::memcpy(body + 2 * i, &v, 2);
    } else {
      body[i] = uint8_t(s.init[i]);
    }
  }
  return bytes;
}

std::vector<float> as_floats(const TensorSpec& s, const uint8_t* body) {
  std::vector<float> v(s.size);
  for (size_t i = 0; i < s.size; ++i) {
    if (s.type == DType::F32) {
      std::memcpy(&v[i], body + 4 * i, 4);
    } else if (s.type == DType::I32) {
      int32_t x;
      std::memcpy(&x, body + 4 * i, 4);
      v[i] = float(x);
    } else if (s.type == DType::U16) {
      uint16_t x;
      std::memcpy(&x, body + 2 * i, 2);
      v[i] = float(x);
    } else if (is_16bit_value(s.type)) {
      uint16_t x;
      std::memcpy(&x, body + 2 * i, 2);
      v[i] = widen_from_storage(precision_of(s.type), x);
    } else {
      v[i] = float(body[i]);
    }
  }
  return v;
}

// Where the guard bytes of one tensor's image were overwritten ("" if nowhere).
std::string guard_damage(const TensorSpec& s, const std::vector<uint8_t>& image) {
  const size_t start = body_start(s), end = image.size() - kGuard;
  for (size_t i = 0; i < image.size(); i = (i + 1 == start ? end : i + 1))
    if (image[i] != kGuardByte)
      return "wrote " + std::to_string(i < start ? start - i : i - end + 1) + " bytes " +
             (i < start ? "before " : "after ") + s.name;
  return "";
}

const TensorSpec& find(const std::vector<TensorSpec>& specs, const std::string& name) {
  for (const auto& s : specs)
    if (s.name == name) return s;
  throw Error("op case has no tensor '" + name + "'");
}

}  // namespace

// ---- DeviceTensors ---------------------------------------------------------------------------

DeviceTensors::DeviceTensors(Backend& be, std::vector<TensorSpec> specs)
    : be_(be), specs_(std::move(specs)) {
  for (size_t i = 0; i < specs_.size(); ++i) {
    mem_.emplace_back(be_, image_size(specs_[i]));
    upload(i);
  }
}

void DeviceTensors::upload(size_t i) { mem_[i].upload(device_image(specs_[i])); }

size_t DeviceTensors::index(const std::string& name) const {
  for (size_t i = 0; i < specs_.size(); ++i)
    if (specs_[i].name == name) return i;
  throw Error("op case has no tensor '" + name + "'");
}

// The typed accessors check the type: a case that asks for the wrong one is a bug in the table.
float* DeviceTensors::f(const std::string& name) const {
  const size_t i = index(name);
  PCNN_CHECK(specs_[i].type == DType::F32, "op case tensor '" << name << "' is not float");
  return reinterpret_cast<float*>(mem_[i].get() + body_start(specs_[i]));
}
int32_t* DeviceTensors::i32(const std::string& name) const {
  const size_t i = index(name);
  PCNN_CHECK(specs_[i].type == DType::I32, "op case tensor '" << name << "' is not int32");
  return reinterpret_cast<int32_t*>(mem_[i].get() + body_start(specs_[i]));
}
uint8_t* DeviceTensors::u8(const std::string& name) const {
  const size_t i = index(name);
  PCNN_CHECK(specs_[i].type == DType::U8, "op case tensor '" << name << "' is not uint8");
  return mem_[i].get() + body_start(specs_[i]);
}

uint16_t* DeviceTensors::u16(const std::string& name) const {
  const size_t i = index(name);
  PCNN_CHECK(element_size(specs_[i].type) == 2, "op case tensor '" << name << "' is not 16-bit");
  return reinterpret_cast<uint16_t*>(mem_[i].get() + body_start(specs_[i]));
}

const TensorSpec& DeviceTensors::spec(const std::string& name) const {
  return specs_[index(name)];
}

void DeviceTensors::set(const std::string& name, const std::vector<float>& values) {
  const size_t i = index(name);
  specs_[i].init = values;
  upload(i);
}

void DeviceTensors::reset() {
  for (size_t i = 0; i < specs_.size(); ++i) upload(i);
}

void DeviceTensors::reset_accumulators() {
  for (size_t i = 0; i < specs_.size(); ++i)
    if (specs_[i].role == Role::InOut) upload(i);
}

std::vector<float> DeviceTensors::download(const std::string& name) const {
  const size_t i = index(name);
  return as_floats(specs_[i], mem_[i].download().data() + body_start(specs_[i]));
}

std::vector<Output> DeviceTensors::outputs(std::string* problems) const {
  std::vector<Output> outs;
  for (size_t i = 0; i < specs_.size(); ++i) {
    const TensorSpec& s = specs_[i];
    const std::vector<uint8_t> image = mem_[i].download();
    std::string damage = guard_damage(s, image);
    // An input is const: the op must leave it as it was uploaded.
    if (damage.empty() && s.role == Role::In && image != device_image(s))
      damage = "changed its input " + s.name;
    if (problems && !damage.empty()) *problems += (problems->empty() ? "" : "; ") + damage;
    if (s.role == Role::Out || s.role == Role::InOut)
      outs.push_back({s.name, as_floats(s, image.data() + body_start(s)),
                      s.type != DType::F32 && !is_16bit_value(s.type)});
  }
  return outs;
}

// ---- a case on one backend -----------------------------------------------------------------

std::vector<TensorSpec> case_tensors(const OpCase& c) {
  Rng rng(c.seed());
  return c.tensors(c.p, rng);
}

RunResult run_case(Backend& be, const OpCase& c) {
  RunResult r;
  try {
    DeviceTensors t(be, case_tensors(c));
    c.launch(be, c.p, t);
    r.outputs = t.outputs(&r.problems);
  } catch (const std::exception& e) {
    r.problems = std::string("threw: ") + e.what();
  }
  return r;
}

Verdict compare_outputs(const OpCase& c, const RunResult& got, const RunResult& want) {
  Verdict v;
  auto fail = [&](const std::string& what) {
    v.ok = false;
    v.detail += (v.detail.empty() ? "" : "\n") + what;
  };
  if (!want.problems.empty()) fail("serial (the reference): " + want.problems);
  if (!got.problems.empty()) fail(got.problems);
  if (got.outputs.size() != want.outputs.size()) {
    if (v.ok) fail("outputs missing");
    return v;
  }
  for (size_t i = 0; i < want.outputs.size(); ++i) {
    // An index one place off is as wrong as one far off: integers are never given a tolerance.
    const Tolerance tol = want.outputs[i].exact ? kExact : c.tol;
    const Comparison cmp = compare(got.outputs[i].values, want.outputs[i].values, tol.value);
    if (!cmp.ok)
      fail("output " + want.outputs[i].name + ": " + cmp.detail + " (tolerance: " + tol.why + ")");
  }
  return v;
}

// ---- finite differences ----------------------------------------------------------------------

namespace {

// The loss L = sum(r * out) in double after a fresh forward pass.
double loss(Backend& be, const OpCase& c, DeviceTensors& t, const std::vector<float>& r) {
  t.reset_accumulators();
  c.launch(be, c.p, t);
  const std::vector<float> y = t.download(c.grad->of);
  double l = 0;
  for (size_t i = 0; i < y.size(); ++i) l += double(y[i]) * r[i];
  return l;
}

}  // namespace

Verdict check_gradient(Backend& be, const OpCase& c) {
  PCNN_CHECK(c.grad, "case " << c.label() << " has no gradient check");
  const GradSpec& g = *c.grad;
  Verdict v;
  std::ostringstream detail;
  Rng rng(c.seed());
  std::vector<TensorSpec> specs = c.tensors(c.p, rng);
  const size_t n = find(specs, g.of).size;
  const std::vector<float> r = g.r.empty() ? uniform(rng, n) : g.r;
  PCNN_CHECK(r.size() == n, "case " << c.label() << ": fixed dL/d" << g.of << " has the wrong size");
  specs.push_back(in(g.d_of.empty() ? "d" + g.of : g.d_of, r));
  for (const auto& w : g.wrt) specs.push_back(out("d" + w, find(specs, w).size));
  for (const auto& e : g.extra) specs.push_back(e);
  DeviceTensors t(be, specs);
  c.launch(be, c.p, t);
  g.backward(be, c.p, t);
  int total = 0;
  for (size_t k = 0; k < g.wrt.size(); ++k) {
    const std::string& w = g.wrt[k];
    const std::vector<float> analytic = t.download("d" + w);
    double rms = 0;
    for (float a : analytic) rms += double(a) * a;
    rms = std::sqrt(rms / std::max<size_t>(1, analytic.size()));
    if (!std::isfinite(rms)) {
      v.ok = false;
      detail << " d" << w << " has NaN/Inf (unwritten?);";
      continue;
    }
    const double tol = g.rel * rms + g.abs;
    std::vector<float> x = t.spec(w).init;
    // Every coordinate of a small tensor (a bias), else a seeded sample.
    const bool every = x.size() <= size_t(g.coords);
    const int count = every ? int(x.size()) : g.coords;
    Rng pick(7 + k);
    int skipped = 0, checked = 0, shown = 0;
    for (int j = 0; j < count; ++j) {
      const size_t i = every ? size_t(j) : size_t(pick.next_u64() % x.size());
      const float keep = x[i];
      auto numeric = [&](float eps) {
        x[i] = keep + eps;
        t.set(w, x);
        const double lp = loss(be, c, t, r);
        x[i] = keep - eps;
        t.set(w, x);
        const double lm = loss(be, c, t, r);
        return (lp - lm) / (2.0 * double(eps));
      };
      const double n1 = numeric(g.eps), n2 = numeric(g.eps / 2);
      x[i] = keep;
      t.set(w, x);
      if (std::fabs(n1 - n2) > tol) {  // a kink between the two steps
        ++skipped;
        continue;
      }
      ++checked;
      if (!(std::fabs(n2 - analytic[i]) <= tol)) {
        v.ok = false;
        if (shown++ < 3)
          detail << " d" << w << "[" << i << "] analytic " << analytic[i] << " numeric " << n2
                 << " (tolerance " << tol << ");";
      }
    }
    v.skipped += skipped;
    total += count;
    if (checked == 0) {
      v.ok = false;
      detail << " d" << w << ": all " << count << " coordinates on kinks;";
    }
  }
  if (v.skipped * 5 > total) {
    v.ok = false;
    detail << " " << v.skipped << " of " << total << " coordinates on kinks (at most a fifth may be);";
  }
  if (!v.ok) v.detail = "finite differences:" + detail.str() + " (" + g.why + ")";
  return v;
}

}  // namespace pcnn::test
