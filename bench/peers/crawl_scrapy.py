#!/usr/bin/env python3
"""Scrapy on the site of `copytrace-bench crawl`: the peer crawler's pages per second.

Usage: crawl_scrapy.py --seed URL [--concurrency 16] [--max-pages N] [--expect N]

A minimal spider: from the seed it follows every link of the site's host with Scrapy's
LinkExtractor (Scrapy's own duplicate filter keeps each URL to one request), and from every
page takes the title and the text of its <p> elements, so it parses each page and reads its
text as the Copytrace crawler does (with far less text logic: no readability-style scoring, no
boilerplate rules, no charset detection beyond Scrapy's own).

Politeness is off, as for the Copytrace crawler: ROBOTSTXT_OBEY False, DOWNLOAD_DELAY 0,
AUTOTHROTTLE off, CONCURRENT_REQUESTS and CONCURRENT_REQUESTS_PER_DOMAIN both --concurrency.
Everything else is Scrapy's default (cookies, retries, redirects, compression, the asyncio
reactor).

The last line of stdout is one JSON object: pages, distinct URLs, requests, responses, pages
without text, wall seconds and CPU seconds of the crawl (from the spider's opening to its
closing), pages/s. Exits 1 when --expect is given and the crawl did not fetch that many
distinct pages, or when a page had no text.

The script sets itself up like quality.py: on first use it creates the venv
`bench/cache/scrapy-venv` (ignored by git), pip-installs the pinned Scrapy and its parsing and
networking libraries, and re-runs itself inside it.
"""

import argparse
import json
import os
import resource
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pinned_venv import reexec_in_venv  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
VENV = os.path.join(REPO, "bench", "cache", "scrapy-venv")
PINS = {
    "scrapy": "2.19.0",
    "twisted": "26.10.0",
    "lxml": "6.1.3",
    "parsel": "1.12.1",
    "w3lib": "2.5.0",
}


def bootstrap():
    """Re-runs this script inside its venv with the pinned versions."""
    reexec_in_venv(VENV, PINS, __file__)


def cpu_seconds():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def crawl(seed, concurrency, max_pages):
    from urllib.parse import urlsplit

    import scrapy
    from scrapy import signals
    from scrapy.crawler import CrawlerProcess
    from scrapy.linkextractors import LinkExtractor

    host = urlsplit(seed).hostname
    result = {}

    class SiteSpider(scrapy.Spider):
        name = "copytrace_bench"
        allowed_domains = [host]

        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.links = LinkExtractor()
            self.pages = 0
            self.urls = set()
            self.empty = []

        async def start(self):
            # Not `start_urls`: those requests skip the duplicate filter and are not recorded
            # in it, so the site's links back to the home page would fetch it a second time.
            yield scrapy.Request(seed, callback=self.parse)

        @classmethod
        def from_crawler(cls, crawler, *args, **kwargs):
            spider = super().from_crawler(crawler, *args, **kwargs)
            crawler.signals.connect(spider.opened, signal=signals.spider_opened)
            crawler.signals.connect(spider.closed_signal, signal=signals.spider_closed)
            return spider

        def opened(self, spider):
            result["start"] = time.perf_counter()
            result["start_cpu"] = cpu_seconds()

        def closed_signal(self, spider, reason):
            result["seconds"] = time.perf_counter() - result["start"]
            result["cpu_seconds"] = cpu_seconds() - result["start_cpu"]
            result["reason"] = reason
            stats = self.crawler.stats.get_stats()
            result["requests"] = stats.get("downloader/request_count", 0)
            result["responses"] = stats.get("downloader/response_count", 0)
            result["retries"] = stats.get("retry/count", 0)
            result["errors"] = stats.get("log_count/ERROR", 0)

        def parse(self, response):
            title = (response.css("title::text").get() or "").strip()
            text = "\n".join(
                t.strip() for t in response.css("p::text").getall() if t.strip()
            )
            self.pages += 1
            self.urls.add(response.url)
            if not text or not title:
                self.empty.append(response.url)
            for link in self.links.extract_links(response):
                yield response.follow(link.url, callback=self.parse)

    settings = {
        "ROBOTSTXT_OBEY": False,
        "CONCURRENT_REQUESTS": concurrency,
        "CONCURRENT_REQUESTS_PER_DOMAIN": concurrency,
        "DOWNLOAD_DELAY": 0,
        "RANDOMIZE_DOWNLOAD_DELAY": False,
        "AUTOTHROTTLE_ENABLED": False,
        "LOG_LEVEL": "INFO",
        "TELNETCONSOLE_ENABLED": False,
    }
    if max_pages:
        settings["CLOSESPIDER_PAGECOUNT"] = max_pages
    process = CrawlerProcess(settings=settings)
    crawler = process.create_crawler(SiteSpider)
    process.crawl(crawler)
    process.start()
    spider = crawler.spider
    result.pop("start", None)
    result.pop("start_cpu", None)
    result.update(
        pages=spider.pages,
        distinct=len(spider.urls),
        empty=len(spider.empty),
        empty_examples=spider.empty[:5],
        pages_per_s=spider.pages / result["seconds"] if result.get("seconds") else 0.0,
        scrapy=scrapy.__version__,
        concurrency=concurrency,
    )
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", required=True)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--max-pages", type=int, default=0, help="stop after N pages")
    parser.add_argument("--expect", type=int, default=0, help="distinct pages the site has")
    args = parser.parse_args()
    bootstrap()
    result = crawl(args.seed, args.concurrency, args.max_pages)
    print(json.dumps(result, ensure_ascii=False), flush=True)
    problems = []
    if args.expect and result["distinct"] != args.expect:
        problems.append(f"fetched {result['distinct']} distinct pages of {args.expect}")
    if result["empty"]:
        problems.append(f"{result['empty']} pages without text: {result['empty_examples']}")
    if problems:
        print("crawl_scrapy.py: " + "; ".join(problems), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
