# gpuwatch_add_test(NAME SOURCES a.cc b.cc LIBS lib1 lib2)
# One GoogleTest executable, registered with CTest test by test.
include(GoogleTest)
find_package(GTest REQUIRED)
function(gpuwatch_add_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE gpuwatch_options ${ARG_LIBS} GTest::gmock GTest::gtest_main)
  target_compile_definitions(${name} PRIVATE
    GPUWATCH_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    GPUWATCH_BINARY_DIR="${PROJECT_BINARY_DIR}")
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 PROPERTIES TIMEOUT 120)
endfunction()
