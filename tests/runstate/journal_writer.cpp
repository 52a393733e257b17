// A child process for the file backend's cross-process tests.
//   journal_writer hold <dir> <id>          create or open the run, print "holding", keep
//                                           the journal (and its lock) until stdin closes
//   journal_writer append <dir> <id> <n>    create or open the run and append records of
//                                           about n bytes forever, printing "acked <seq>"
//                                           once each is durable
#include <fiskai/runstate/file_store.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>

#include <cstdio>
#include <iostream>
#include <string>

namespace rs = fiskai::runstate;

namespace {

boost::asio::awaitable<int> run(std::string mode, std::string dir, std::string id, std::size_t size,
                                boost::asio::any_io_executor blocking) {
    auto store = rs::make_file_store(dir, blocking);
    auto j = co_await store->open(id);
    if (!j && j.error().code == rs::errc::not_found) {
        rs::meta_record meta;
        meta.prompt = "written by journal_writer";
        meta.fingerprint = {"anthropic", "m", "s", "t", "off", 1, 1};
        j = co_await store->create(id, meta);
    }
    if (!j) {
        std::cout << "error " << j.error().message << std::endl;
        co_return 1;
    }
    if (mode == "hold") {
        std::cout << "holding" << std::endl;
        std::string ignored;
        while (std::getline(std::cin, ignored)) {}
        co_return 0;
    }
    std::int64_t iteration = 0;
    while (true) {
        rs::assistant_record a;
        a.iteration = iteration++;
        a.message.who = fiskai::llm::role::assistant;
        a.message.content.push_back(fiskai::llm::text_block{std::string(size, 'x')});
        a.in_tokens = 1;
        a.out_tokens = 1;
        rs::payload body = std::move(a);
        auto r = co_await (*j)->append_next(std::move(body));
        if (!r) {
            std::cout << "error " << r.error().message << std::endl;
            co_return 1;
        }
        std::cout << "acked " << (*j)->last_seq() << std::endl;
    }
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 4) {
        std::cerr << "usage: journal_writer hold|append <dir> <id> [size]\n";
        return 2;
    }
    const std::string mode = argv[1];
    const std::size_t size = argc > 4 ? std::stoul(argv[4]) : 100;
    boost::asio::io_context ioc;
    boost::asio::thread_pool pool(1);
    int rc = 1;
    boost::asio::co_spawn(ioc, run(mode, argv[2], argv[3], size, pool.get_executor()),
                          [&](std::exception_ptr e, int value) {
                              if (e) {
                                  try {
                                      std::rethrow_exception(e);
                                  } catch (const std::exception& ex) {
                                      std::cout << "error " << ex.what() << std::endl;
                                  }
                                  rc = 1;
                              } else {
                                  rc = value;
                              }
                          });
    ioc.run();
    pool.join();
    return rc;
}
