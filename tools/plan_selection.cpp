// Options bound to text for the library's option tables (cli.hpp: TextOptions).
#include <cstdio>

#include "cli.hpp"

namespace postbox::cli {

TextOptions::TextOptions(CLI::App* cmd, const std::vector<SelectionOption>& options,
                         const std::map<std::string, std::string>& defaults, const std::set<std::string>& skip) {
  for (const SelectionOption& o : options) {
    if (skip.count(o.name) != 0) continue;
    CLI::Option* opt = cmd->add_option("--" + o.name, text_[o.name], o.help)->type_name(o.value);
    if (const auto d = defaults.find(o.name); d != defaults.end()) opt->default_str(d->second);
    options_[o.name] = opt;
  }
}

std::map<std::string, std::string> TextOptions::given() const {
  std::map<std::string, std::string> out;
  for (const auto& [name, opt] : options_)
    if (opt->count() > 0) out[name] = text_.at(name);
  return out;
}

}  // namespace postbox::cli
