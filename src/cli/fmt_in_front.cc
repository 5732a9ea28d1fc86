// {fmt}'s compiled part, built into the one-shot front (src/cli/CMakeLists.txt)
// so that `gpuwatch` loads no libfmt.so: with libstdc++ linked statically as
// well, starting it maps only libc and libm (docs/BENCHMARKS.md, "A static
// front"). The libraries it links were compiled against the shared {fmt}, so
// they call the same non-inline functions; format-inl.h defines them here, and
// the templates the shared library instantiates are instantiated below.
// Debian ships no libfmt.a to link instead.
#include <fmt/format-inl.h>

FMT_BEGIN_NAMESPACE
namespace detail {

template auto dragonbox::to_decimal(float x) noexcept -> dragonbox::decimal_fp<float>;
template auto dragonbox::to_decimal(double x) noexcept -> dragonbox::decimal_fp<double>;
template locale_ref::locale_ref(const std::locale& loc);
template auto locale_ref::get<std::locale>() const -> std::locale;
template auto thousands_sep_impl(locale_ref) -> thousands_sep_result<char>;
template auto decimal_point_impl(locale_ref) -> char;
template void buffer<char>::append(const char*, const char*);
template void vformat_to(buffer<char>&, string_view, basic_format_args<FMT_BUFFER_CONTEXT(char)>,
                         locale_ref);
template auto thousands_sep_impl(locale_ref) -> thousands_sep_result<wchar_t>;
template auto decimal_point_impl(locale_ref) -> wchar_t;
template void buffer<wchar_t>::append(const wchar_t*, const wchar_t*);

}  // namespace detail
FMT_END_NAMESPACE
