// Reading --lr_scheduler_kwargs: each scheduler takes the keys it knows, and a key that none took
// is an error, as transformers' get_scheduler passes them on as keyword arguments.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace kiln {

class KwargsReader {
 public:
  // `where` names the flag in errors ("--lr_scheduler_kwargs"); kwargs must be an object.
  KwargsReader(const nlohmann::json& kwargs, std::string_view where);

  // Sets `value` when the key is present; a value of another type is an error naming the key.
  void number(std::string_view key, double& value);
  void number(std::string_view key, std::optional<double>& value);
  void integer(std::string_view key, int64_t& value);
  void integer(std::string_view key, std::optional<int64_t>& value);
  void choice(std::string_view key, std::string& value,
              std::initializer_list<std::string_view> choices);
  // Fails naming the first key no call above read, and what `scheduler` takes.
  void finish(std::string_view scheduler) const;

 private:
  const nlohmann::json* find(std::string_view key);

  const nlohmann::json& kwargs_;
  std::string where_;
  std::set<std::string, std::less<>> known_;
};

}  // namespace kiln
