# What lets a cold build of the test command fit in minutes on two cores
# (docs/development.md, "Where the time goes"):
#   - unity builds: each target's files compiled sixteen to a translation unit, so the
#     templates of nlohmann/json, fmt and GoogleTest that every file instantiates are
#     compiled (under src/, with ASan's instrumentation) once per sixteen files instead
#     of once per file (sixteen against eight: a cold build 450 s against 536 s).
#     Files of one target share one unit, so their file-local names must differ.
#     -DCMAKE_UNITY_BUILD=OFF builds file by file (each file then proves it includes what
#     it uses).
#   - ccache, when it is installed (deps/debian.txt): a rebuild of unchanged units is free.
if(NOT DEFINED CMAKE_UNITY_BUILD)
  set(CMAKE_UNITY_BUILD ON)
endif()
if(NOT DEFINED CMAKE_UNITY_BUILD_BATCH_SIZE)
  set(CMAKE_UNITY_BUILD_BATCH_SIZE 16)
endif()

find_program(CORRAL_CCACHE ccache)
if(CORRAL_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  set(CMAKE_CXX_COMPILER_LAUNCHER ${CORRAL_CCACHE})
endif()
