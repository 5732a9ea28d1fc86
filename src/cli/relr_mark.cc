// gpuwatch-top's relative relocations are packed (DT_RELR: a bitmap of
// addresses instead of 24 bytes each, about 5,000 of them), which glibc (2.36
// and later) applies only to a binary that also needs its GLIBC_ABI_DT_RELR
// version. lld 15 adds that need with -z pack-relative-relocs; lld 14, which
// Debian 12 has, packs them (--pack-dyn-relocs=relr) but does not, so this
// reference to glibc's symbol of that version adds it. CMakeLists.txt links it
// only where such a binary was seen to run.
extern "C" {
extern const char GLIBC_ABI_DT_RELR __attribute__((weak));
__asm__(".symver GLIBC_ABI_DT_RELR, GLIBC_ABI_DT_RELR@GLIBC_ABI_DT_RELR");
__attribute__((used)) const char* const gpuwatch_relr_mark = &GLIBC_ABI_DT_RELR;
}
