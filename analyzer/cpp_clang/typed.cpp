// The typed C++ front end (typed.h). Compiled without RTTI, as Debian's LLVM is: only LLVM's
// own casts (dyn_cast, isa) are used here.
#include "analyzer/cpp_clang/typed.h"

#include <clang/AST/ASTConsumer.h>
#include <clang/AST/ASTContext.h>
#include <clang/AST/DeclCXX.h>
#include <clang/AST/DeclTemplate.h>
#include <clang/AST/ExprCXX.h>
#include <clang/AST/RecursiveASTVisitor.h>
#include <clang/Basic/Diagnostic.h>
#include <clang/Basic/SourceManager.h>
#include <clang/Basic/Version.h>
#include <clang/Frontend/CompilerInstance.h>
#include <clang/Frontend/FrontendAction.h>
#include <clang/Frontend/FrontendActions.h>
#include <clang/Tooling/ArgumentsAdjusters.h>
#include <clang/Tooling/CompilationDatabase.h>
#include <clang/Tooling/Tooling.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <unordered_map>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

#include "analyzer/cpp/compile_db.h"

namespace fs = std::filesystem;

namespace tl::cpp {
namespace {

using clang::QualType;

bool has_torch_header(const fs::path& dir) {
  std::error_code ec;
  return fs::is_regular_file(dir / "torch" / "torch.h", ec);
}

std::string run_python_for_torch_include() {
  // the include folder of the `torch` package of python3, if there is one (a pip LibTorch)
  FILE* p = popen("python3 -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), \"include\"))' 2>/dev/null", "r");
  if (!p) return "";
  char buf[4096];
  std::string out;
  while (size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  pclose(p);
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

// The Clang resource folder (stddef.h and the other compiler headers) of the libclang-cpp
// trainlint links: CMake's value, else the newest under Debian's llvm-14.
std::string resource_dir() {
  std::error_code ec;
#ifdef TRAINLINT_CLANG_RESOURCE_DIR
  if (fs::is_directory(TRAINLINT_CLANG_RESOURCE_DIR, ec)) return TRAINLINT_CLANG_RESOURCE_DIR;
#endif
  fs::path base = "/usr/lib/llvm-14/lib/clang";
  std::string best;
  for (auto& e : fs::directory_iterator(base, ec))
    if (e.path().filename().string() > best) best = e.path().filename().string();
  return best.empty() ? "" : (base / best).string();
}

uint64_t fnv(std::string_view s, uint64_t h = 1469598103934665603ull) {
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

// ---------------------------------------------------------------- types
struct Classifier {
  std::function<bool(const clang::Decl*)> in_run;                 // is the declaration in a run file

  static bool derives_from(const clang::CXXRecordDecl* rd, std::string_view base, int depth = 0) {
    if (!rd || depth > 32) return false;
    rd = rd->getDefinition();
    if (!rd) return false;
    for (const auto& b : rd->bases()) {
      const clang::CXXRecordDecl* br = b.getType()->getAsCXXRecordDecl();
      if (!br) continue;
      if (br->getQualifiedNameAsString() == base) return true;
      if (derives_from(br, base, depth + 1)) return true;
    }
    return false;
  }
  // the name the fast path gives a class: an analysed class by its own (template) name, a
  // library class by its qualified name
  std::string name_of(const clang::CXXRecordDecl* rd) const {
    const clang::CXXRecordDecl* named = rd;
    if (const auto* spec = llvm::dyn_cast<clang::ClassTemplateSpecializationDecl>(rd))
      if (const clang::ClassTemplateDecl* tmpl = spec->getSpecializedTemplate()) named = tmpl->getTemplatedDecl();
    if (in_run(named)) return named->getNameAsString();
    return rd->getQualifiedNameAsString();
  }
  const clang::CXXRecordDecl* template_arg_record(const clang::CXXRecordDecl* rd, unsigned i) const {
    const auto* spec = llvm::dyn_cast<clang::ClassTemplateSpecializationDecl>(rd);
    if (!spec || spec->getTemplateArgs().size() <= i) return nullptr;
    const clang::TemplateArgument& a = spec->getTemplateArgs()[i];
    if (a.getKind() != clang::TemplateArgument::Type) return nullptr;
    return a.getAsType()->getAsCXXRecordDecl();
  }
  Type template_arg(const clang::CXXRecordDecl* rd, unsigned i) const {
    const auto* spec = llvm::dyn_cast<clang::ClassTemplateSpecializationDecl>(rd);
    if (!spec || spec->getTemplateArgs().size() <= i) return {};
    const clang::TemplateArgument& a = spec->getTemplateArgs()[i];
    if (a.getKind() != clang::TemplateArgument::Type) return {};
    return classify(a.getAsType());
  }
  // the ModuleHolder<Impl> base of a holder class, its Impl
  const clang::CXXRecordDecl* holder_impl(const clang::CXXRecordDecl* rd, int depth = 0) const {
    if (!rd || depth > 32) return nullptr;
    if (rd->getQualifiedNameAsString() == "torch::nn::ModuleHolder") return template_arg_record(rd, 0);
    rd = rd->getDefinition();
    if (!rd) return nullptr;
    for (const auto& b : rd->bases())
      if (const auto* impl = holder_impl(b.getType()->getAsCXXRecordDecl(), depth + 1)) return impl;
    return nullptr;
  }

  Type classify(QualType qt) const {
    if (qt.isNull()) return {};
    qt = qt.getNonReferenceType();
    if (qt->isDependentType() || qt->isUndeducedType()) return {};
    QualType can = qt.getCanonicalType().getUnqualifiedType();
    if (const auto* pt = can->getAs<clang::PointerType>()) {
      Type inner = classify(pt->getPointeeType());
      if (inner.kind == TypeKind::Module) return {TypeKind::ModuleHolder, inner.name};
      return {};
    }
    if (const auto* et = can->getAs<clang::EnumType>()) {
      std::string q = et->getDecl()->getQualifiedNameAsString();
      if (q == "c10::DeviceType") return {TypeKind::Device, "torch::DeviceType"};
      return {TypeKind::Other, q};
    }
    if (can->isBuiltinType()) return {TypeKind::Other, can.getAsString()};
    const clang::CXXRecordDecl* rd = can->getAsCXXRecordDecl();
    if (!rd) return {};
    std::string q = rd->getQualifiedNameAsString();
    if (q == "at::Tensor" || q == "at::TensorBase") return {TypeKind::Tensor, "at::Tensor"};
    if (q == "c10::Device") return {TypeKind::Device, "torch::Device"};
    if (q == "c10::AutoGradMode") return {};  // on or off by its argument: the fast path reads it
    if (q == "c10::NoGradGuard" || q == "at::NoGradGuard" || q == "torch::NoGradGuard" || q == "c10::InferenceMode")
      return {TypeKind::GradGuard, "torch::NoGradGuard"};
    if (q == "torch::data::Example") return {TypeKind::Batch, "torch::data::Example"};
    if (q == "std::vector" && template_arg(rd, 0).kind == TypeKind::Batch) return {TypeKind::Batch, "std::vector<torch::data::Example>"};
    if (q == "std::shared_ptr" || q == "std::unique_ptr") {
      Type inner = template_arg(rd, 0);
      if (inner.kind == TypeKind::Module) return {TypeKind::ModuleHolder, inner.name};
      if (inner.kind == TypeKind::DataLoader || inner.kind == TypeKind::Optimizer) return inner;
      return {TypeKind::Other, q};
    }
    if (q.starts_with("torch::data::") && (q.find("DataLoader") != std::string::npos || derives_from(rd, "torch::data::DataLoaderBase")))
      return {TypeKind::DataLoader, q};
    if (q == "torch::nn::ModuleHolder" || derives_from(rd, "torch::nn::ModuleHolder")) {
      const clang::CXXRecordDecl* impl = holder_impl(rd);
      if (impl && in_run(impl)) return {TypeKind::ModuleHolder, name_of(impl)};
      return {TypeKind::ModuleHolder, q};
    }
    if (q == "torch::nn::Module" || derives_from(rd, "torch::nn::Module")) return {TypeKind::Module, name_of(rd)};
    if (q == "torch::optim::Optimizer" || derives_from(rd, "torch::optim::Optimizer")) return {TypeKind::Optimizer, q};
    return {TypeKind::Other, name_of(rd)};
  }
};

// ---------------------------------------------------------------- the AST walk
struct RunFiles {
  std::map<std::string, std::string> path_of_abs;  // absolute path -> SourceFile::path()
};


class Collector : public clang::RecursiveASTVisitor<Collector> {
 public:
  Collector(clang::ASTContext& ctx, const RunFiles& run, TypedFacts& out)
      : sm_(ctx.getSourceManager()), run_(run), out_(out) {
    cls_.in_run = [this](const clang::Decl* d) { return d && where(d->getLocation()).first != nullptr; };
  }

  bool VisitDeclaratorDecl(clang::DeclaratorDecl* d) {
    if (llvm::isa<clang::DecompositionDecl>(d)) return true;
    QualType t = d->getType();
    if (const auto* fd = llvm::dyn_cast<clang::FunctionDecl>(d)) t = fd->getReturnType();
    Type ty = cls_.classify(t);
    if (ty.kind == TypeKind::Unknown) return true;
    put_decl(d->getLocation(), ty);
    if (auto q = d->getQualifierLoc()) put_decl(q.getBeginLoc(), ty);  // `void NetImpl::forward` as written
    return true;
  }

  bool VisitCXXMemberCallExpr(clang::CXXMemberCallExpr* e) {
    const auto* me = llvm::dyn_cast<clang::MemberExpr>(e->getCallee()->IgnoreParens());
    if (!me) return true;
    const clang::Expr* base = me->getBase()->IgnoreImpCasts();
    Type recv;
    if (const auto* op = llvm::dyn_cast<clang::CXXOperatorCallExpr>(base); op && op->getOperator() == clang::OO_Arrow)
      recv = cls_.classify(op->getArg(0)->getType());  // net->f(): the holder as written
    else
      recv = cls_.classify(base->getType());
    put_call(me->getMemberLoc(), TypedCall{recv, cls_.classify(e->getType())}, true);
    return true;
  }

  bool VisitCallExpr(clang::CallExpr* e) {
    if (llvm::isa<clang::CXXMemberCallExpr>(e) || llvm::isa<clang::CXXOperatorCallExpr>(e)) return true;
    put_call(e->getBeginLoc(), TypedCall{{}, cls_.classify(e->getType())}, false);
    return true;
  }

  // the run file and byte offset of a location as written (macro arguments at their spelling)
  std::pair<TypedFile*, uint32_t> where(clang::SourceLocation loc) {
    if (loc.isInvalid()) return {nullptr, 0};
    loc = sm_.getSpellingLoc(loc);
    clang::FileID id = sm_.getFileID(loc);
    auto it = file_cache_.find(id.getHashValue());
    if (it == file_cache_.end()) {
      TypedFile* tf = nullptr;
      if (const clang::FileEntry* fe = sm_.getFileEntryForID(id)) {
        std::string name = fe->tryGetRealPathName().str();
        if (name.empty()) name = fe->getName().str();
        auto p = run_.path_of_abs.find(fs::path(name).lexically_normal().string());
        if (p != run_.path_of_abs.end()) tf = &out_[p->second];
      }
      it = file_cache_.emplace(id.getHashValue(), tf).first;
    }
    if (!it->second) return {nullptr, 0};
    return {it->second, sm_.getFileOffset(loc)};
  }

 private:
  void put_decl(clang::SourceLocation loc, const Type& t) {
    auto [tf, off] = where(loc);
    if (tf) tf->decls.emplace(off, t);
  }
  void put_call(clang::SourceLocation loc, const TypedCall& c, bool member) {
    auto [tf, off] = where(loc);
    if (tf) (member ? tf->member_calls : tf->calls).emplace(off, c);
  }

  const clang::SourceManager& sm_;
  const RunFiles& run_;
  TypedFacts& out_;
  Classifier cls_;
  std::unordered_map<unsigned, TypedFile*> file_cache_;
};

class CollectAction : public clang::ASTFrontendAction {
 public:
  CollectAction(const RunFiles& run, TypedFacts& out) : run_(run), out_(out) {}
  std::unique_ptr<clang::ASTConsumer> CreateASTConsumer(clang::CompilerInstance&, llvm::StringRef) override {
    struct Consumer : clang::ASTConsumer {
      const RunFiles& run;
      TypedFacts& out;
      Consumer(const RunFiles& r, TypedFacts& o) : run(r), out(o) {}
      void HandleTranslationUnit(clang::ASTContext& ctx) override {
        Collector c(ctx, run, out);
        c.TraverseDecl(ctx.getTranslationUnitDecl());
      }
    };
    return std::make_unique<Consumer>(run_, out_);
  }

 private:
  const RunFiles& run_;
  TypedFacts& out_;
};

struct CollectFactory : clang::tooling::FrontendActionFactory {
  const RunFiles& run;
  TypedFacts& out;
  CollectFactory(const RunFiles& r, TypedFacts& o) : run(r), out(o) {}
  std::unique_ptr<clang::FrontendAction> create() override { return std::make_unique<CollectAction>(run, out); }
};

// Errors of one file: their count and the first few, as "file:line:col: message".
class ErrorCollector : public clang::DiagnosticConsumer {
 public:
  void HandleDiagnostic(clang::DiagnosticsEngine::Level level, const clang::Diagnostic& info) override {
    DiagnosticConsumer::HandleDiagnostic(level, info);
    if (level < clang::DiagnosticsEngine::Error) return;
    ++errors;
    if (level == clang::DiagnosticsEngine::Fatal) fatal = true;
    if (first.size() >= 3) return;
    llvm::SmallString<256> msg;
    info.FormatDiagnostic(msg);
    std::string where;
    if (info.hasSourceManager() && info.getLocation().isValid()) {
      clang::PresumedLoc p = info.getSourceManager().getPresumedLoc(info.getLocation());
      if (p.isValid())
        where = fs::path(p.getFilename()).filename().string() + ":" + std::to_string(p.getLine()) + ":" +
                std::to_string(p.getColumn()) + ": ";
    }
    first.push_back(where + std::string(msg.str()));
  }
  int errors = 0;
  bool fatal = false;
  std::vector<std::string> first;
};

bool is_source(const std::string& path) {
  std::string ext = fs::path(path).extension().string();
  return ext == ".cpp" || ext == ".cc" || ext == ".cxx" || ext == ".c++";
}

std::string abs_of(const SourceFile& f) {
  std::error_code ec;
  fs::path p = fs::absolute(f.abs_path().empty() ? fs::path(f.path()) : fs::path(f.abs_path()), ec);
  return p.lexically_normal().string();
}

// One file's compile command: from its database, else the default.
struct Command {
  std::vector<std::string> args;  // without the file, -o and -c
  std::vector<std::string> local;  // -I of the run's own header folders: the file's, not the PCH's
  std::string dir;
  std::string origin;             // "compile_commands.json in X", "default"
};

Command default_command(const std::vector<std::string>& inc, const std::set<std::string>& header_dirs) {
  Command c;
  c.args = {"clang++", "-xc++", "-std=c++17"};
  // the folders of the run's own headers (`#include "convnet.h"` from src/ with include/ beside);
  // kept apart so that one precompiled header serves every project
  for (auto& d : header_dirs) c.local.push_back("-I" + d);
  for (auto& d : inc) c.args.push_back("-I" + d);
  if (std::error_code ec; fs::is_regular_file("/usr/local/cuda/include/cuda.h", ec)) c.args.push_back("-I/usr/local/cuda/include");
  c.origin = "the default command";
  std::error_code ec;
  c.dir = fs::current_path(ec).string();
  return c;
}

std::vector<std::string> strip_file_and_output(const std::vector<std::string>& cmd, const std::string& file) {
  std::vector<std::string> out;
  for (size_t i = 0; i < cmd.size(); ++i) {
    const std::string& a = cmd[i];
    if (a == "-o" || a == "-MF" || a == "-MT" || a == "-MQ") {
      ++i;
      continue;
    }
    if (a == "-c" || a == "-MD" || a == "-MMD" || a == "--" || (a.rfind("-o", 0) == 0 && a.size() > 2 && i > 0)) continue;
    if (i > 0 && (a == file || fs::path(a).filename() == fs::path(file).filename())) continue;
    out.push_back(a);
  }
  return out;
}

}  // namespace

std::vector<std::string> torch_include_dirs() {
  std::vector<std::string> out;
  auto add = [&](const fs::path& inc) {
    // a LibTorch include/ holds torch/csrc/api/include/torch/torch.h; its C++ API folder holds torch/torch.h
    std::error_code ec;
    if (has_torch_header(inc / "torch/csrc/api/include")) {
      out = {inc.string(), (inc / "torch/csrc/api/include").string()};
      return true;
    }
    if (has_torch_header(inc)) {
      out = {inc.string()};
      return true;
    }
    return false;
  };
  if (const char* env = std::getenv("TORCH_INCLUDE"); env && *env && add(env)) return out;
  if (add("/usr/include")) return out;  // Debian's libtorch-dev
  std::string py = run_python_for_torch_include();
  if (!py.empty() && add(py)) return out;
  return {};
}

ClangResult typed_facts(const std::vector<const SourceFile*>& files, const std::vector<bool>& parse,
                        const ClangOptions& opts) {
  ClangResult res;
  RunFiles run;
  std::vector<std::pair<std::string, std::string>> mapped;  // abs path, content
  for (const SourceFile* f : files) {
    std::string a = abs_of(*f);
    run.path_of_abs[a] = f->path();
    mapped.emplace_back(a, std::string(f->text()));
  }
  std::set<std::string> header_dirs;
  for (const SourceFile* f : files) {
    std::string ext = fs::path(f->path()).extension().string();
    if (ext == ".h" || ext == ".hpp" || ext == ".hh" || ext == ".hxx") header_dirs.insert(fs::path(abs_of(*f)).parent_path().string());
  }
  const std::string rdir = resource_dir();
  std::vector<std::string> inc;
  bool inc_known = false;

  // ---- each source file's command
  std::map<std::string, std::unique_ptr<clang::tooling::CompilationDatabase>> dbs;  // by folder
  auto database = [&](const std::string& dir, std::string* err) -> clang::tooling::CompilationDatabase* {
    auto it = dbs.find(dir);
    if (it == dbs.end()) {
      std::string e;
      auto db = clang::tooling::CompilationDatabase::loadFromDirectory(dir, e);
      if (db) db = clang::tooling::inferMissingCompileCommands(std::move(db));
      else *err = e;
      it = dbs.emplace(dir, std::move(db)).first;
    }
    return it->second.get();
  };
  struct Job {
    const SourceFile* file;
    std::string abs;
    Command cmd;
  };
  std::vector<Job> jobs;
  CompileDbFinder finder;
  for (size_t fi = 0; fi < files.size(); ++fi) {
    const SourceFile* f = files[fi];
    if (!is_source(f->path()) || fi >= parse.size() || !parse[fi]) continue;
    Job j{f, abs_of(*f), {}};
    // -p, else the nearest compile_commands.json, else the nearest compile_flags.txt (the same
    // flags for every file there)
    std::string dbdir = opts.compile_db_dir;
    if (dbdir.empty()) {
      const auto& found = finder.near(j.abs);
      dbdir = !found.commands_dir.empty() ? found.commands_dir : found.flags_dir;
    }
    bool have = false;
    if (!dbdir.empty()) {
      std::string err;
      if (auto* db = database(dbdir, &err)) {
        auto cmds = db->getCompileCommands(j.abs);
        if (!cmds.empty() && !cmds.front().CommandLine.empty()) {
          j.cmd.args = strip_file_and_output(cmds.front().CommandLine, cmds.front().Filename);
          j.cmd.dir = cmds.front().Directory;
          j.cmd.origin = fs::exists(fs::path(dbdir) / "compile_commands.json") ? "compile_commands.json in " + dbdir
                                                                                : "compile_flags.txt in " + dbdir;
          // a relative -I of compile_flags.txt is relative to its folder
          if (j.cmd.dir.empty()) j.cmd.dir = dbdir;
          std::error_code ec;
          if (!fs::is_directory(j.cmd.dir, ec)) {
            res.messages.push_back({f->path(), "clang: the compile command's directory `" + j.cmd.dir + "` (" + j.cmd.origin +
                                                   ") does not exist; using the default command", false});
          } else {
            have = true;
          }
        } else {
          res.messages.push_back({f->path(), "clang: no entry for this file in " + dbdir + "; using the default command", false});
        }
      } else if (!opts.compile_db_dir.empty()) {
        res.messages.push_back({f->path(), "clang: cannot read the compile database in " + dbdir + ": " + err +
                                               "; using the default command", false});
      }
    }
    if (have) {
      // relative include folders, absolute: the same flags mean the same headers from any folder
      auto& a = j.cmd.args;
      for (size_t k = 1; k < a.size(); ++k) {
        for (std::string_view flag : {"-I", "-isystem", "-iquote", "-idirafter"}) {
          std::string path;
          size_t at = k;
          if (a[k] == flag && k + 1 < a.size()) at = k + 1, path = a[k + 1];
          else if (a[k].rfind(flag, 0) == 0 && a[k].size() > flag.size()) path = a[k].substr(flag.size());
          else continue;
          if (fs::path(path).is_relative()) {
            std::string absolute = (fs::path(j.cmd.dir) / path).lexically_normal().string();
            a[at] = at == k ? std::string(flag) + absolute : absolute;
          }
          break;
        }
      }
    }
    if (!have) {
      if (!inc_known) {
        inc = torch_include_dirs();
        inc_known = true;
        res.include_dirs = inc;
      }
      j.cmd = default_command(inc, header_dirs);
      // the nearest header folders first: a project of several programs has several nnet.h
      auto shared = [&](const std::string& flag) {
        std::string d = flag.substr(2), f = j.abs;
        size_t n = 0;
        while (n < d.size() && n < f.size() && d[n] == f[n]) ++n;
        return n;
      };
      std::stable_sort(j.cmd.local.begin(), j.cmd.local.end(),
                       [&](const std::string& a, const std::string& b) { return shared(a) > shared(b); });
    }
    jobs.push_back(std::move(j));
  }
  if (jobs.empty()) return res;

  // ---- precompiled headers of <torch/torch.h>, one per distinct command (files that include it)
  std::unique_ptr<fs::path> tmp_pch_dir;
  std::error_code abs_ec;
  fs::path pch_dir = opts.pch_dir.empty() ? fs::path() : fs::absolute(opts.pch_dir, abs_ec).lexically_normal();
  if (pch_dir.empty()) {
    char buf[] = "/tmp/trainlint-pch-XXXXXX";
    if (mkdtemp(buf)) {
      pch_dir = buf;
      tmp_pch_dir = std::make_unique<fs::path>(pch_dir);
    }
  }
  std::map<std::string, std::string> pch_of;  // command key -> pch file ("" when none)
  auto key_of = [](const Command& c) {  // relative paths were made absolute: the folder does not matter
    std::string k;
    for (auto& a : c.args) k += '\x1f' + a;
    return k;
  };
  auto pch_start = std::chrono::steady_clock::now();
  for (auto& j : jobs) {
    if (j.file->text().find("torch/torch.h") == std::string_view::npos) continue;
    std::string key = key_of(j.cmd);
    if (pch_of.count(key) || pch_dir.empty()) continue;
    // the stamp: this Clang, the command, and torch.h's identity as found with the command
    std::string stamp = std::string(CLANG_VERSION_STRING) + '\x1e' + key;
    for (auto& a : j.cmd.args)
      if (a.rfind("-I", 0) == 0) {
        std::error_code ec;
        fs::path th = fs::path(a.substr(2)) / "torch" / "torch.h";
        if (fs::is_regular_file(th, ec)) {
          stamp += th.string() + std::to_string(fs::file_size(th, ec));
          auto t = fs::last_write_time(th, ec);
          stamp += std::to_string(t.time_since_epoch().count());
          fs::path ver = fs::path(a.substr(2)) / "torch" / "version.h";
          if (fs::is_regular_file(ver, ec)) stamp += std::to_string(fs::last_write_time(ver, ec).time_since_epoch().count());
        }
      }
    char name[40];
    std::snprintf(name, sizeof name, "torch-%016llx.pch", static_cast<unsigned long long>(fnv(stamp)));
    fs::path pch = pch_dir / name;
    std::error_code ec;
    if (fs::is_regular_file(pch, ec)) {
      pch_of[key] = pch.string();
      res.pch_reused = true;
      // a use: the cache's pruning removes the headers used least recently first
      fs::last_write_time(pch, fs::file_time_type::clock::now(), ec);
      continue;
    }
    fs::create_directories(pch_dir, ec);
    fs::path src = pch_dir / (std::string(name) + ".hpp");
    fs::path tmp = pch_dir / (std::string(name) + "." + std::to_string(getpid()) + ".tmp");
    std::vector<std::string> args = j.cmd.args;
    for (size_t k = 0; k < args.size();) {  // the language is the header's, said below
      if (args[k] == "-x" && k + 1 < args.size()) args.erase(args.begin() + k, args.begin() + k + 2);
      else if (args[k].rfind("-x", 0) == 0 && args[k].size() > 2) args.erase(args.begin() + k);
      else ++k;
    }
    clang::tooling::FixedCompilationDatabase db(j.cmd.dir, std::vector<std::string>(args.begin() + 1, args.end()));
    // On disk (the driver looks for its input there), created once with its whole content and
    // never rewritten: Clang records the source's size and time in the header it builds and
    // rejects the header when either changes, so a concurrent run rewriting it while another's
    // build finishes last would leave a header no run can use. Written under a temporary name and
    // hard-linked into place, which fails when another run was first (its file is the same).
    if (!fs::exists(src, ec)) {
      fs::path stmp = pch_dir / (std::string(name) + ".hpp." + std::to_string(getpid()) + ".tmp");
      {
        std::ofstream out(stmp, std::ios::binary);
        out << "#include <torch/torch.h>\n";
      }
      if (::link(stmp.c_str(), src.c_str()) != 0 && !fs::exists(src, ec)) fs::rename(stmp, src, ec);
      fs::remove(stmp, ec);
    }
    clang::tooling::ClangTool tool(db, {src.string()});
    tool.clearArgumentsAdjusters();
    std::vector<std::string> extra = {"-xc++-header", "-fpch-instantiate-templates", "-w", "-fno-caret-diagnostics", "-o",
                                      tmp.string()};
    if (!rdir.empty()) extra.push_back("-resource-dir=" + rdir);
    tool.appendArgumentsAdjuster(clang::tooling::getInsertArgumentAdjuster(extra, clang::tooling::ArgumentInsertPosition::BEGIN));
    ErrorCollector diags;
    tool.setDiagnosticConsumer(&diags);
    tool.setPrintErrorMessage(false);
    int rc = tool.run(clang::tooling::newFrontendActionFactory<clang::GeneratePCHAction>().get());
    if (rc == 0 && diags.errors == 0 && fs::is_regular_file(tmp, ec)) {
      fs::rename(tmp, pch, ec);  // atomic: a concurrent run sees the whole file or none
      pch_of[key] = ec ? "" : pch.string();
    } else {
      fs::remove(tmp, ec);
      pch_of[key] = "";
      res.messages.push_back({j.file->path(), "clang: could not precompile <torch/torch.h> with " + j.cmd.origin +
                                                  (diags.first.empty() ? "" : " (" + diags.first.front() + ")") +
                                                  "; each file parses the headers itself",
                              false});
    }
  }
  res.pch_ms = res.pch_reused && pch_of.size() == 1 ? 0
               : std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - pch_start).count();

  // ---- parse the files, in parallel, each with its own tool and facts
  std::atomic<size_t> next{0};
  TypedFacts facts;  // of every file, merged under msg_mu
  std::mutex msg_mu;
  auto worker = [&] {
    for (size_t i; (i = next.fetch_add(1)) < jobs.size();) {
      const Job& j = jobs[i];
      std::vector<std::string> args(j.cmd.args.begin() + (j.cmd.args.empty() ? 0 : 1), j.cmd.args.end());
      args.insert(args.end(), j.cmd.local.begin(), j.cmd.local.end());
      clang::tooling::FixedCompilationDatabase db(j.cmd.dir, args);
      clang::tooling::ClangTool tool(db, {j.abs});
      for (auto& [p, text] : mapped) tool.mapVirtualFile(p, text);
      // -fno-caret-diagnostics: Clang's own "N errors generated." line stays off the user's stderr
      std::vector<std::string> extra = {"-w", "-ferror-limit=50", "-fno-caret-diagnostics"};
      if (!rdir.empty()) extra.push_back("-resource-dir=" + rdir);
      auto pit = pch_of.find(key_of(j.cmd));
      std::string pch = pit == pch_of.end() ? "" : pit->second;
      if (!pch.empty()) {
        extra.push_back("-include-pch");
        extra.push_back(pch);
      }
      tool.appendArgumentsAdjuster(clang::tooling::getInsertArgumentAdjuster(extra, clang::tooling::ArgumentInsertPosition::END));
      ErrorCollector diags;
      tool.setDiagnosticConsumer(&diags);
      tool.setPrintErrorMessage(false);  // said once, by the engine's message
      TypedFacts local;
      CollectFactory factory(run, local);
      int rc = 1;
      try {
        rc = tool.run(&factory);
      } catch (...) {
        rc = 1;
      }
      std::lock_guard<std::mutex> lock(msg_mu);
      ++res.parsed;
      if (diags.fatal || (rc != 0 && local.empty())) {
        std::string why = diags.first.empty() ? "Clang could not parse it" : diags.first.front();
        std::string used = j.cmd.origin;
        if (j.cmd.origin == "the default command")
          used += inc.empty() ? ", no LibTorch headers found (set TORCH_INCLUDE)" : ", LibTorch headers from " + inc.front();
        res.messages.push_back({j.file->path(), "clang: " + why + " (" + used + "); this file's types come from the fast path", true});
        continue;
      }
      if (diags.errors > 0)
        res.messages.push_back({j.file->path(), "clang: " + std::to_string(diags.errors) + " error" + (diags.errors == 1 ? "" : "s") +
                                                    " (first: " + diags.first.front() + "); the types Clang could read were used",
                                false});
      for (auto& [path, tf] : local) {
        TypedFile& dst = facts[path];
        for (auto& kv : tf.decls) dst.decls.insert(kv);
        for (auto& kv : tf.member_calls) dst.member_calls.insert(kv);
        for (auto& kv : tf.calls) dst.calls.insert(kv);
      }
    }
  };
  unsigned n = std::max(1u, std::min<unsigned>(opts.threads, static_cast<unsigned>(jobs.size())));
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < n; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  res.facts = std::move(facts);
  if (tmp_pch_dir) {
    std::error_code ec;
    fs::remove_all(*tmp_pch_dir, ec);
  }
  return res;
}

}  // namespace tl::cpp
