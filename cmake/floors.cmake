# The floors of the house: one library target per folder, bottom floor first. A floor links only
# the floors it USES, and its sources see only the headers of those floors (and of the floors
# they use in turn): each floor gets an include root of its own, a tree of links to its folder,
# and never the project root. So an #include that climbs a floor does not find its header and
# the build fails. scripts/check-includes.py reads this same table and is stricter: a file's
# own #include lines may name only its own floor and the floors listed after USES (not what
# those use in turn), and it names the offending line.
#
# The top-level folders read as a straight stack, bottom to top: core/ (model, memory), sources/
# and stages/, trial/ (store, api: the trial floor), rules/ and sinks/, engine/ (graph), apps/
# (report, coordination, serve, simulator, cli: the commands floor), and python/src on top. A
# floor uses floors of its own folder or of the folders below it, never of one above.
#
# rulestream_floor(NAME FOLDER [SUBFOLDERS sub...] [USES floor...] [PUBLIC_DEPS target...]
#                  [PRIVATE_DEPS target...])
#   FOLDER        the folder (relative to the project root) whose *.cpp/*.hpp are the floor
#   SUBFOLDERS    folders inside FOLDER (one level, named) whose files are the floor's too; a
#                 sub-folder not named here belongs to no floor (check-includes.py says so)
#   USES          the floors it may include and links, publicly
#   PUBLIC_DEPS   libraries its headers need;  PRIVATE_DEPS  libraries only its sources need

rulestream_floor(model core/model
  PUBLIC_DEPS Boost::json Threads::Threads PRIVATE_DEPS CURL::libcurl PkgConfig::PCRE2)
rulestream_floor(memory core/memory USES model)

rulestream_floor(format stages/format USES model memory
  PUBLIC_DEPS rulestream_proto PRIVATE_DEPS ZLIB::ZLIB)
rulestream_floor(reduce stages/reduce USES model memory)
rulestream_floor(source_common sources/common USES model memory)
rulestream_floor(local sources/local USES model memory source_common PUBLIC_DEPS Boost::headers)
rulestream_floor(s3 sources/s3 USES model memory source_common
  PUBLIC_DEPS Boost::headers PRIVATE_DEPS Boost::url CURL::libcurl PkgConfig::PUGIXML)
rulestream_floor(open sources/open USES model source_common local s3)

rulestream_floor(load stages/load USES model memory format reduce PRIVATE_DEPS TBB::tbb)
rulestream_floor(assemble stages/assemble USES model memory reduce)
rulestream_floor(series stages/series USES model format)
rulestream_floor(tensorboard stages/tensorboard USES model format series)
rulestream_floor(metrics stages/metrics USES model format series)

rulestream_floor(store trial/store USES model memory format reduce load PRIVATE_DEPS TBB::tbb)
rulestream_floor(trial trial/api USES model memory reduce store open)

# The rules floor, grouped: its top holds the rule API (Rule, RuleRegistry, SeriesRule, the
# default set, the built-in list); sagemaker/ SageMaker's built-in rules, series/ rulestream's
# own series rules, support/ what rules share. One floor: they may include one another.
rulestream_floor(rules rules SUBFOLDERS sagemaker series support USES model trial)
rulestream_floor(sinks sinks USES model PRIVATE_DEPS Boost::url CURL::libcurl)

rulestream_floor(graph engine/graph
  USES model memory format reduce load assemble source_common s3 open store trial rules sinks
       series tensorboard metrics
  PRIVATE_DEPS TBB::tbb ${CMAKE_DL_LIBS})

# One HTML page per job (issue 26): the job replayed with its rules, its curves and where the
# rules fired. Below the commands so that `report` and a later `serve` build the same page.
rulestream_floor(report apps/report
  USES model format reduce open store trial rules sinks graph series tensorboard metrics)

# Scale-out on Redis (issue 24): a hiredis connection, job leases with fencing tokens and
# their heartbeat. On the model floor alone (its errors), below the service that uses it, so
# that it knows nothing of jobs' pipelines and is tested on its own against a redis-server.
rulestream_floor(coordination apps/coordination USES model PRIVATE_DEPS PkgConfig::HIREDIS)

# The service (issue 24): finds the jobs under its roots, runs each one's rules, keeps where
# every job stands and answers HTTP (Boost.Beast, header-only) about it.
rulestream_floor(serve apps/serve
  USES model source_common local open store trial rules sinks graph series tensorboard report
       coordination
  PUBLIC_DEPS Boost::headers PRIVATE_DEPS Boost::url)

rulestream_floor(simulator apps/simulator USES model memory format reduce PRIVATE_DEPS TBB::tbb)
rulestream_floor(commands apps/cli
  USES model format reduce source_common s3 open store trial rules sinks graph simulator
       series tensorboard metrics report serve coordination
  PRIVATE_DEPS Boost::program_options)

# The top floor: the Python module's bindings (python/src; its entry point, module.cpp, is the
# module's own, as main.cpp is the CLI's). smdebug trials and rules go through the public
# headers of model, store, trial and rules only; TensorBoard logdirs have no public API yet, so
# their reading (python/src/tensorboard_logdir.*) uses the internal headers of open (a path's
# storage), format and series (the reader and the series store) and graph (what a path holds).
if(RULESTREAM_WITH_PYTHON)
  rulestream_floor(python python/src
                   USES model store trial rules open format series tensorboard metrics graph
                   PUBLIC_DEPS pybind11::pybind11)
  set_target_properties(rulestream_python PROPERTIES CXX_VISIBILITY_PRESET hidden)
endif()

# The headers a user includes (what examples/ uses, and what issue 25 installs), and the
# headers they include in turn: a public header includes public headers only.
set(RULESTREAM_PUBLIC_HEADERS
  core/model/collection.hpp
  core/model/compression.hpp
  core/model/dtype.hpp
  core/model/exceptions.hpp
  core/model/memory_budget.hpp
  core/model/mode.hpp
  core/model/reduction.hpp
  core/model/reduction_set.hpp
  core/model/required_tensors.hpp
  core/model/rule_event.hpp
  core/model/shared_bytes.hpp
  core/model/storage.hpp
  core/model/storage_options.hpp
  core/model/tensor_value.hpp
  core/model/utc_time.hpp
  trial/store/encoded_value.hpp
  trial/store/record_ref.hpp
  trial/store/trial_options.hpp
  trial/api/trial.hpp
  trial/api/tensor.hpp
  rules/rule.hpp
  rules/rule_registry.hpp
  sinks/sink.hpp
  sinks/sink_delivery.hpp
  sinks/sink_registry.hpp
  engine/graph/incident_policy.hpp
  engine/graph/job_outcome.hpp
  engine/graph/pipeline_config.hpp
  engine/graph/plugin_api.hpp
  engine/graph/plugin_loader.hpp
  engine/graph/rule_pipeline.hpp
  apps/simulator/job_simulator.hpp)

# The floors that take longest to compile are compiled 8 sources to a translation unit: the
# headers they share (Boost, oneTBB, the trial API) are then parsed once a batch rather than once
# a file (a clean build of the program on two cores: 183 s instead of 277 s, benchmarks/RESULTS.md
# "Building"). Their
# sources keep file-local names apart (no two define the same name in an anonymous namespace).
# GCC's subobject-linkage warning is about a class in a header holding a file-local type; in a
# batch every source is "a header", though such classes (a pipeline's Impl) live in their .cpp.
option(RULESTREAM_UNITY_BUILD "Compile the slowest floors in batches of 8 sources" ON)
if(RULESTREAM_UNITY_BUILD)
  foreach(floor rules graph serve commands report s3 sinks store)
    set_target_properties(rulestream_${floor} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 8)
    target_compile_options(rulestream_${floor}
                           PRIVATE $<$<CXX_COMPILER_ID:GNU>:-Wno-subobject-linkage>)
  endforeach()
endif()
