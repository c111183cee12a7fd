// FactCache (rules/python/rule_context.h): the module and program facts rules share are computed
// once, whatever the number of threads that ask at the same time; a thread that asks while another
// computes waits for that answer; a failed computation leaves the fact to the next asker.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "rules/python/rule_context.h"
#include "support/model_support.h"

using namespace tl;

namespace {

// One program: train.py (the entry) and the two modules it imports.
tl::test::BuiltModel three_module_program() {
  return tl::test::build_model({{"train.py", "import a\nimport b\n\nif __name__ == \"__main__\":\n    a.f()\n"},
                                {"a.py", "def f():\n    return 1\n"},
                                {"b.py", "def g():\n    return 2\n"}});
}

// Runs fn(i) on `n` threads that start together.
template <class Fn>
void together(int n, Fn fn) {
  std::atomic<int> ready{0};
  std::vector<std::thread> ts;
  for (int i = 0; i < n; ++i)
    ts.emplace_back([&, i] {
      ready.fetch_add(1);
      while (ready.load() < n) std::this_thread::yield();
      fn(i);
    });
  for (auto& t : ts) t.join();
}

}  // namespace

TEST(FactCache, AModuleFactAskedByManyThreadsAtOnceIsComputedOnce) {
  auto b = three_module_program();
  FactCache facts(b.pm.modules().size());
  std::atomic<int> computed{0};
  std::vector<int> answers(8, -1);
  together(8, [&](int i) {
    answers[i] = facts.module_fact(b.mod("a.py"), "slow", [&] {
      computed.fetch_add(1);
      std::this_thread::sleep_for(std::chrono::milliseconds(30));  // the others arrive meanwhile
      return true;
    });
  });
  EXPECT_EQ(computed.load(), 1);
  for (int a : answers) EXPECT_EQ(a, 1);
  // the same key on another module is another fact; module_sites under the same key is another
  EXPECT_FALSE(facts.module_fact(b.mod("b.py"), "slow", [] { return false; }));
  EXPECT_TRUE(facts.module_sites(b.mod("a.py"), "slow", [] { return std::vector<py::NodeId>{}; }).empty());
}

TEST(FactCache, AProgramFactComputesEachMemberOnceAcrossThreadsAndPrograms) {
  auto b = three_module_program();
  ASSERT_EQ(b.pm.programs().size(), 1u);
  const py::Program& p = b.pm.programs()[0];
  ASSERT_EQ(p.members.size(), 3u);
  FactCache facts(b.pm.modules().size());
  std::atomic<int> per_member{0};
  std::vector<int> answers(8, -1);
  together(8, [&](int i) {
    const py::Module& asker = b.mod(i % 2 ? "a.py" : "train.py");
    answers[i] = facts.any_in_programs(b.pm, asker, "defines-g", [&](const py::Module& m) {
      per_member.fetch_add(1);
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      return m.path == "b.py";
    });
  });
  EXPECT_EQ(per_member.load(), 3);  // each member once, not once per thread
  for (int a : answers) EXPECT_EQ(a, 1);
  // the program's answer is kept: asking again computes nothing
  EXPECT_TRUE(facts.any_in_program(p, "defines-g", [&](const py::Module&) {
    per_member.fetch_add(1);
    return false;
  }));
  EXPECT_EQ(per_member.load(), 3);
}

TEST(FactCache, SitesOfAProgramFactCountOnlyCodeTheProgramRuns) {
  auto b = three_module_program();
  const py::Program& p = b.pm.programs()[0];
  FactCache facts(b.pm.modules().size());
  // the fact's sites: the return statements of the module at `path`
  auto returns_in = [](std::string path) {
    return [path](const py::Module& m) {
      std::vector<py::NodeId> out;
      for (py::NodeId n = 0; n < m.tree.size(); ++n)
        if (m.tree.kind(n) == py::K::ReturnStatement && m.path == path) out.push_back(n);
      return out;
    };
  };
  // the return in b.g: b is a member, but nothing the program runs calls g
  EXPECT_FALSE(facts.any_site_in_program(b.pm, p, "returns-in-b", returns_in("b.py")));
  // in a.f, which the entry's main block calls, the return counts
  EXPECT_TRUE(facts.any_site_in_program(b.pm, p, "returns-in-a", returns_in("a.py")));
}

TEST(FactCache, AFailedComputationIsLeftToTheNextAsker) {
  auto b = three_module_program();
  FactCache facts(b.pm.modules().size());
  EXPECT_THROW(facts.module_fact(b.mod("a.py"), "flaky", []() -> bool { throw std::runtime_error("no"); }),
               std::runtime_error);
  int computed = 0;
  EXPECT_TRUE(facts.module_fact(b.mod("a.py"), "flaky", [&] {
    ++computed;
    return true;
  }));
  EXPECT_EQ(computed, 1);
}
