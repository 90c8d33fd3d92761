// The text forms of OS noise (noise_parse.hpp).
#include "postbox/frontend/noise_parse.hpp"

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "postbox/runtime/check.hpp"
#include "postbox/runtime/parse.hpp"
#include "postbox/runtime/ticks.hpp"

namespace postbox::sim {
namespace {

std::vector<std::string_view> fields_of(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    const std::size_t b = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > b) out.push_back(line.substr(b, i - b));
  }
  return out;
}

}  // namespace

Noise parse_noise_spec(std::string_view spec, std::uint64_t seed, bool cosched) {
  const std::string whole = "--noise '" + std::string(spec) + "'";
  const auto colon = spec.find(':');
  const std::string_view kind = spec.substr(0, colon);
  const char* shape = "periodic:PERIOD:DETOUR, exp:MEAN_GAP:MEAN_DETOUR or pareto:MEAN_GAP:MIN_DETOUR:ALPHA";
  if (colon == std::string_view::npos || (kind != "periodic" && kind != "exp" && kind != "pareto"))
    throw InputError(whole + " must be " + shape);
  const std::vector<std::string_view> f = split_list(spec.substr(colon + 1), ':', whole);
  const std::size_t want = kind == "pareto" ? 3 : 2;
  if (f.size() != want) throw InputError(whole + " must be " + shape);
  const char* names[2][3] = {{"PERIOD", "DETOUR", ""}, {"MEAN_GAP", kind == "exp" ? "MEAN_DETOUR" : "MIN_DETOUR", "ALPHA"}};
  const int row = kind == "periodic" ? 0 : 1;
  auto time = [&](std::size_t i) {
    const std::string what = whole + ": " + names[row][i];
    const double v = parse_real(f[i], what);
    if (v < 0) throw InputError(what + " must not be negative, got " + std::string(f[i]));
    return to_ticks(v, what);
  };
  const Ticks a = time(0), b = time(1);
  try {
    if (kind == "periodic") {
      if (a < 1) throw InputError("PERIOD must be above 0, got " + std::string(f[0]));
      if (b >= a) throw InputError("DETOUR must be shorter than PERIOD");
      return Noise::periodic(a, b, seed, cosched);
    }
    if (a < 1) throw InputError("MEAN_GAP must be above 0, got " + std::string(f[0]));
    if (kind == "exp") return Noise::exponential(a, b, seed, cosched);
    const double alpha = parse_real(f[2], "ALPHA");
    if (!(alpha > 1)) throw InputError("ALPHA must be above 1 (a finite mean), got " + std::string(f[2]));
    return Noise::pareto(a, b, alpha, seed, cosched);
  } catch (const InputError& e) {
    throw InputError(whole + ": " + e.what());
  }
}

Noise parse_noise_trace(std::string_view text, std::string_view name, std::uint64_t seed, bool cosched) {
  std::vector<Detour> detours;
  std::vector<int> line_of;
  int lineno = 0;
  std::size_t pos = 0;
  auto where = [&](int line) { return std::string(name) + ":" + std::to_string(line) + ": "; };
  while (pos < text.size()) {
    std::size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    std::string_view line = text.substr(pos, eol - pos);
    pos = eol + 1;
    ++lineno;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const std::vector<std::string_view> f = fields_of(line);
    if (f.empty() || f[0].front() == '#') continue;
    if (f.size() != 2)
      throw InputError(where(lineno) + "expected START DURATION (nanoseconds), got '" + std::string(line) + "'");
    Detour d;
    try {
      const double start = parse_real(f[0], "start");
      const double length = parse_real(f[1], "duration");
      if (start < 0) throw InputError("start must not be negative, got " + std::string(f[0]));
      if (length < 0) throw InputError("duration must not be negative, got " + std::string(f[1]));
      // Nanoseconds are 10^-3 of the model's unit.
      d = Detour{to_ticks(start / 1000, "start"), to_ticks(length / 1000, "duration")};
    } catch (const InputError& e) {
      throw InputError(where(lineno) + e.what());
    }
    if (!detours.empty() && d.start < detours.back().start)
      throw InputError(where(lineno) + "start " + std::string(f[0]) + " is before the line before's (line " +
                       std::to_string(line_of.back()) + ")");
    detours.push_back(d);
    line_of.push_back(lineno);
  }
  if (detours.empty()) throw InputError(std::string(name) + ": no detours (each line: START DURATION in nanoseconds)");
  const Ticks period = detours.back().start;
  if (period < 1)
    throw InputError(where(line_of.back()) + "the last line's start is the trace's length and must be above 0");
  for (std::size_t i = 0; i < detours.size(); ++i)
    if (detours[i].length >= period)
      throw InputError(where(line_of[i]) + "a detour not shorter than the trace's length (the last line's start)");
  try {
    return Noise(std::move(detours), period, seed, cosched);
  } catch (const InputError& e) {
    throw InputError(std::string(name) + ": " + e.what());
  }
}

std::optional<Noise> take_noise_options(std::map<std::string, std::string>& given) {
  auto take = [&](const char* key) -> std::optional<std::string> {
    const auto it = given.find(key);
    if (it == given.end()) return std::nullopt;
    std::string v = it->second;
    given.erase(it);
    return v;
  };
  const auto spec = take("noise");
  const auto cosched = take("noise-cosched");
  const auto gap = take("noise-gap");
  const auto detour = take("noise-detour");
  if (!spec) {
    if (gap || detour) throw InputError(std::string("--param ") + (gap ? "noise-gap" : "noise-detour") + " needs --noise SPEC");
    if (cosched) throw InputError("--noise-cosched needs --noise");
    return std::nullopt;
  }
  std::string text = *spec;
  if (gap || detour) {
    const auto colon = text.find(':');
    std::vector<std::string> f;
    if (colon != std::string::npos)
      for (std::string_view v : split_list(std::string_view(text).substr(colon + 1), ':', "--noise '" + text + "'"))
        f.emplace_back(v);
    if (f.size() < 2) throw InputError("--noise '" + text + "' has no numbers for --param noise-gap or noise-detour to replace");
    if (gap) f[0] = *gap;
    if (detour) f[1] = *detour;
    text.resize(colon + 1);
    for (std::size_t k = 0; k < f.size(); ++k) text += (k ? ":" : "") + f[k];
  }
  const auto seed = given.find("seed");
  return parse_noise_spec(text, seed != given.end() ? parse_uint(seed->second, "--seed") : 1, cosched.has_value());
}

}  // namespace postbox::sim
