# NATS peers (npm nats, @nats-io/services) against `fisk-ai-a2a serve` (pinned in
# package-lock.json; `npm ci --prefix tests/interop` installs them). Included by
# CMakeLists.txt in this directory.
if(NODE_EXECUTABLE AND TARGET fisk-ai-a2a AND TARGET fisk-demo)
  add_test(NAME interop.nats_services
    COMMAND ${NODE_EXECUTABLE} --test --test-reporter=spec ${CMAKE_CURRENT_SOURCE_DIR}/nats_services.test.mjs)
  set_tests_properties(interop.nats_services PROPERTIES
    LABELS "interop;nats" TIMEOUT 120
    ENVIRONMENT "FISK_AI_A2A=$<TARGET_FILE:fisk-ai-a2a>;FISK_DEMO=$<TARGET_FILE:fisk-demo>")
endif()
# The task flow (serve.md §6) driven by an npm `nats` caller against `fisk-ai-serve serve` on a
# real nats-server, with the scripted fake LLM.
if(NODE_EXECUTABLE AND NATS_SERVER_EXECUTABLE AND TARGET fisk-ai-serve AND TARGET fisk-demo AND TARGET fiskai-fake-llm)
  add_test(NAME interop.serve_task_flow
    COMMAND ${NODE_EXECUTABLE} --test --test-reporter=spec ${CMAKE_CURRENT_SOURCE_DIR}/serve_task_flow.test.mjs)
  set_tests_properties(interop.serve_task_flow PROPERTIES
    LABELS "interop;nats" TIMEOUT 180
    ENVIRONMENT "FISK_AI_SERVE=$<TARGET_FILE:fisk-ai-serve>;FISK_DEMO=$<TARGET_FILE:fisk-demo>;FISKAI_FAKE_LLM=$<TARGET_FILE:fiskai-fake-llm>;NATS_SERVER=${NATS_SERVER_EXECUTABLE}")
  # A seeded hostile sweep of the same flow: mutated requests and control messages, then the
  # reply sets, the worker's answers and its sanitizer log checked.
  add_test(NAME interop.serve_hostile
    COMMAND ${NODE_EXECUTABLE} --test --test-reporter=spec ${CMAKE_CURRENT_SOURCE_DIR}/serve_hostile.test.mjs)
  set_tests_properties(interop.serve_hostile PROPERTIES
    LABELS "interop;nats" TIMEOUT 300
    ENVIRONMENT "FISK_AI_SERVE=$<TARGET_FILE:fisk-ai-serve>;FISK_DEMO=$<TARGET_FILE:fisk-demo>;FISKAI_FAKE_LLM=$<TARGET_FILE:fiskai-fake-llm>;NATS_SERVER=${NATS_SERVER_EXECUTABLE}")
  # The same for the queue channel: hostile jobs on a JetStream work queue (docs/queue.md).
  add_test(NAME interop.queue_hostile
    COMMAND ${NODE_EXECUTABLE} --test --test-reporter=spec ${CMAKE_CURRENT_SOURCE_DIR}/queue_hostile.test.mjs)
  set_tests_properties(interop.queue_hostile PROPERTIES
    LABELS "interop;nats" TIMEOUT 300
    ENVIRONMENT "FISK_AI_SERVE=$<TARGET_FILE:fisk-ai-serve>;FISK_DEMO=$<TARGET_FILE:fisk-demo>;FISKAI_FAKE_LLM=$<TARGET_FILE:fiskai-fake-llm>;NATS_SERVER=${NATS_SERVER_EXECUTABLE}")
endif()
# The caller's side: `fisk-ai-a2a ask` against a hostile worker written with npm `nats`.
if(NODE_EXECUTABLE AND NATS_SERVER_EXECUTABLE AND TARGET fisk-ai-a2a)
  add_test(NAME interop.ask_hostile
    COMMAND ${NODE_EXECUTABLE} --test --test-reporter=spec ${CMAKE_CURRENT_SOURCE_DIR}/ask_hostile.test.mjs)
  set_tests_properties(interop.ask_hostile PROPERTIES
    LABELS "interop;nats" TIMEOUT 300
    ENVIRONMENT "FISK_AI_A2A=$<TARGET_FILE:fisk-ai-a2a>;NATS_SERVER=${NATS_SERVER_EXECUTABLE}")
endif()
