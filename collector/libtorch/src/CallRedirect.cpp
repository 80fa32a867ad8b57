#include "CallRedirect.h"

#include <elf.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

namespace torchscope::collector::libtorch {
namespace {

#if defined(__x86_64__)
constexpr std::uint32_t kJumpSlot = R_X86_64_JUMP_SLOT;
constexpr std::uint32_t kGlobalData = R_X86_64_GLOB_DAT;
#elif defined(__aarch64__)
constexpr std::uint32_t kJumpSlot = R_AARCH64_JUMP_SLOT;
constexpr std::uint32_t kGlobalData = R_AARCH64_GLOB_DAT;
#else
#error "CallRedirect knows the relocations of x86-64 and AArch64 only"
#endif

struct Search {
  const char* symbol = nullptr;
  void* replacement = nullptr;
  const std::vector<std::string>* skip = nullptr;
  Redirected result;
};

struct DynamicTables {
  const ElfW(Sym) * symbols = nullptr;
  const char* names = nullptr;
  const ElfW(Rela) * plt = nullptr;
  std::size_t plt_bytes = 0;
  const ElfW(Rela) * data = nullptr;
  std::size_t data_bytes = 0;
};

// glibc rewrites the dynamic section's addresses to absolute ones where that section is writable (x86-64,
// AArch64); elsewhere they stay offsets from the load address.
template <class T>
const T* address(ElfW(Addr) value, ElfW(Addr) base) {
  return reinterpret_cast<const T*>(value < base ? value + base : value);
}

DynamicTables tablesOf(const dl_phdr_info& info) {
  DynamicTables tables;
  for (int i = 0; i < info.dlpi_phnum; ++i) {
    if (info.dlpi_phdr[i].p_type != PT_DYNAMIC) continue;
    const auto* entry = reinterpret_cast<const ElfW(Dyn)*>(info.dlpi_addr + info.dlpi_phdr[i].p_vaddr);
    for (; entry->d_tag != DT_NULL; ++entry) {
      const ElfW(Addr) value = entry->d_un.d_ptr;
      switch (entry->d_tag) {
        case DT_SYMTAB: tables.symbols = address<ElfW(Sym)>(value, info.dlpi_addr); break;
        case DT_STRTAB: tables.names = address<char>(value, info.dlpi_addr); break;
        case DT_JMPREL: tables.plt = address<ElfW(Rela)>(value, info.dlpi_addr); break;
        case DT_PLTRELSZ: tables.plt_bytes = entry->d_un.d_val; break;
        case DT_RELA: tables.data = address<ElfW(Rela)>(value, info.dlpi_addr); break;
        case DT_RELASZ: tables.data_bytes = entry->d_un.d_val; break;
        default: break;
      }
    }
  }
  return tables;
}

bool insideRelro(const dl_phdr_info& info, std::uintptr_t slot) {
  for (int i = 0; i < info.dlpi_phnum; ++i) {
    const ElfW(Phdr)& header = info.dlpi_phdr[i];
    if (header.p_type != PT_GNU_RELRO) continue;
    const std::uintptr_t start = info.dlpi_addr + header.p_vaddr;
    if (slot >= start && slot < start + header.p_memsz) return true;
  }
  return false;
}

// Writes the slot; a slot in the read-only-after-relocation part is made writable for the write and read-only again.
bool rewrite(const dl_phdr_info& info, void** slot, void* value, std::string* why) {
  const auto page_size = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  auto* page = reinterpret_cast<void*>(reinterpret_cast<std::uintptr_t>(slot) & ~(page_size - 1));
  const bool relro = insideRelro(info, reinterpret_cast<std::uintptr_t>(slot));
  if (relro && mprotect(page, page_size, PROT_READ | PROT_WRITE) != 0) {
    *why = std::strerror(errno);
    return false;
  }
  __atomic_store_n(slot, value, __ATOMIC_RELEASE);  // a thread may be calling through it
  if (relro) (void)mprotect(page, page_size, PROT_READ);
  return true;
}

void redirectIn(const dl_phdr_info& info, const ElfW(Rela) * relocations, std::size_t bytes,
                const DynamicTables& tables, Search& search, bool* changed) {
  if (relocations == nullptr) return;
  const std::size_t count = bytes / sizeof(ElfW(Rela));
  for (std::size_t i = 0; i < count; ++i) {
    const ElfW(Rela)& relocation = relocations[i];
    const auto type = static_cast<std::uint32_t>(ELF64_R_TYPE(relocation.r_info));
    if (type != kJumpSlot && type != kGlobalData) continue;
    const ElfW(Sym)& symbol = tables.symbols[ELF64_R_SYM(relocation.r_info)];
    if (std::strcmp(tables.names + symbol.st_name, search.symbol) != 0) continue;
    auto** slot = reinterpret_cast<void**>(info.dlpi_addr + relocation.r_offset);
    std::string why;
    if (rewrite(info, slot, search.replacement, &why)) {
      *changed = true;
    } else {
      search.result.failures.push_back(std::string(info.dlpi_name) + ": " + why);
    }
  }
}

int visit(dl_phdr_info* info, std::size_t /*size*/, void* data) {
  auto& search = *static_cast<Search*>(data);
  const std::string name = info->dlpi_name != nullptr ? info->dlpi_name : "";
  if (name.find("linux-vdso") != std::string::npos) return 0;
  for (const std::string& skipped : *search.skip) {
    if (!skipped.empty() && name.find(skipped) != std::string::npos) return 0;
  }
  const DynamicTables tables = tablesOf(*info);
  if (tables.symbols == nullptr || tables.names == nullptr) return 0;
  bool changed = false;
  redirectIn(*info, tables.plt, tables.plt_bytes, tables, search, &changed);
  redirectIn(*info, tables.data, tables.data_bytes, tables, search, &changed);
  if (changed) search.result.objects.push_back(name);
  return 0;
}

}  // namespace

Redirected redirectCalls(const char* symbol, void* replacement, const std::vector<std::string>& skip) {
  Search search;
  search.symbol = symbol;
  search.replacement = replacement;
  search.skip = &skip;
  dl_iterate_phdr(&visit, &search);
  return std::move(search.result);
}

}  // namespace torchscope::collector::libtorch
