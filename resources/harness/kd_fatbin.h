// The device code of a shared library, read as data: the ELF section `.nv_fatbin` holds one fat
// binary per translation unit (magic 0xBA55ED50, a 16-byte header, then entries). The processes
// that time variants load device code from these bytes (cuModuleLoadData) and never dlopen the
// library, so none of its host code runs there. Every offset is bounds-checked: the file may come
// from anywhere.
#pragma once
#include "kd_common.h"
#include <elf.h>

struct FatbinPart {
  size_t offset;  // from the start of the .nv_fatbin section
  size_t bytes;   // header + payload
};
struct DeviceImage {
  std::vector<unsigned char> section;  // the whole .nv_fatbin section (8-byte aligned storage)
  std::vector<FatbinPart> parts;
};

static const unsigned FATBIN_MAGIC = 0xBA55ED50u;

// Reads the .nv_fatbin section of an ELF shared library; false with a reason when it has none or
// the file is not a well-formed 64-bit ELF.
static bool read_device_image(const std::string& path, DeviceImage& img, std::string* why) {
  std::vector<unsigned char> d;
  if (!read_file(path, d, (size_t)4 << 30, why)) return false;
  auto bad = [&](const std::string& m) { if (why) *why = path + ": " + m; return false; };
  if (d.size() < sizeof(Elf64_Ehdr) || memcmp(d.data(), ELFMAG, SELFMAG) != 0 || d[EI_CLASS] != ELFCLASS64) return bad("not a 64-bit ELF file");
  Elf64_Ehdr eh;
  memcpy(&eh, d.data(), sizeof eh);
  if (eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shnum == 0 || eh.e_shoff > d.size() || (d.size() - eh.e_shoff) / sizeof(Elf64_Shdr) < eh.e_shnum) return bad("bad section header table");
  std::vector<Elf64_Shdr> sh(eh.e_shnum);
  memcpy(sh.data(), d.data() + eh.e_shoff, eh.e_shnum * sizeof(Elf64_Shdr));
  if (eh.e_shstrndx >= eh.e_shnum) return bad("bad section name table index");
  const Elf64_Shdr& names = sh[eh.e_shstrndx];
  if (names.sh_offset > d.size() || names.sh_size > d.size() - names.sh_offset) return bad("bad section name table");
  for (const Elf64_Shdr& s : sh) {
    if (s.sh_name >= names.sh_size) continue;
    const char* nm = (const char*)d.data() + names.sh_offset + s.sh_name;
    size_t room = names.sh_size - s.sh_name;
    if (strnlen(nm, room) == room || strcmp(nm, ".nv_fatbin") != 0) continue;
    if (s.sh_type == SHT_NOBITS || s.sh_offset > d.size() || s.sh_size > d.size() - s.sh_offset) return bad(".nv_fatbin lies outside the file");
    img.section.assign(d.begin() + s.sh_offset, d.begin() + s.sh_offset + s.sh_size);
    img.parts.clear();
    size_t pos = 0;
    while (pos + 16 <= img.section.size()) {
      unsigned magic;
      memcpy(&magic, img.section.data() + pos, 4);
      if (magic != FATBIN_MAGIC) { pos += 8; continue; }  // padding between fat binaries
      unsigned short hs;
      unsigned long long fs;
      memcpy(&hs, img.section.data() + pos + 6, 2);
      memcpy(&fs, img.section.data() + pos + 8, 8);
      if (hs < 16 || fs > img.section.size() || hs + fs > img.section.size() - pos) return bad("a fat binary in .nv_fatbin is cut off");
      img.parts.push_back(FatbinPart{pos, (size_t)(hs + fs)});
      pos += hs + fs;
      pos = (pos + 7) & ~(size_t)7;
    }
    if (img.parts.empty()) return bad(".nv_fatbin holds no fat binary");
    return true;
  }
  return bad("no .nv_fatbin section (no device code)");
}

// For the test suite (no GPU): the fat binaries of a library, and whether each holds a name.
static std::string mode_fatbin_selftest(const std::string& lib, const std::vector<std::string>& names) {
  DeviceImage img;
  std::string why;
  if (!read_device_image(lib, img, &why)) return "\"ok\":false,\"error\":" + jstr(why);
  std::string o = "\"ok\":true,\"sectionBytes\":" + std::to_string(img.section.size()) + ",\"parts\":[";
  for (size_t i = 0; i < img.parts.size(); i++) {
    const FatbinPart& p = img.parts[i];
    std::string found = "[";
    for (size_t k = 0; k < names.size(); k++) {
      bool has = std::search(img.section.begin() + p.offset, img.section.begin() + p.offset + p.bytes, names[k].begin(), names[k].end()) != img.section.begin() + p.offset + p.bytes;
      found += std::string(k ? "," : "") + (has ? "true" : "false");
    }
    o += std::string(i ? "," : "") + "{\"offset\":" + std::to_string(p.offset) + ",\"bytes\":" + std::to_string(p.bytes) + ",\"holds\":" + found + "]}";
  }
  return o + "]";
}
