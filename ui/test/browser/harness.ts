/**
 * Browser-test plumbing: a static server for the built mock page on
 * 127.0.0.1 (an ephemeral port), Debian's Chromium through playwright-core,
 * and helpers to read the fake backend's call log. No fixed sleeps: every
 * wait is on a selector or a condition, with a timeout.
 */
import { createReadStream, existsSync, statSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { extname, join, normalize, resolve } from "node:path";
import { chromium, type Browser, type BrowserContextOptions, type Page } from "playwright-core";
import { afterAll, beforeAll } from "vitest";

export const ROOT = resolve(import.meta.dirname, "../../.mock-dist");
const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".json": "application/json",
};

export interface Served {
  url: string;
  close(): Promise<void>;
}

/** Serves `root` on 127.0.0.1:0 until closed. */
export async function serve(root = ROOT): Promise<Served> {
  if (!existsSync(join(root, "mock.html"))) throw new Error(`${root}/mock.html is missing: run \`npm run test:browser\` (it builds first)`);
  const server: Server = createServer((req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url ?? "/", "http://x").pathname)).replace(/^([/\\])+/, "");
    const file = join(root, path || "mock.html");
    if (!file.startsWith(root) || !existsSync(file) || !statSync(file).isFile()) {
      res.writeHead(404).end("not found");
      return;
    }
    res.writeHead(200, { "content-type": TYPES[extname(file)] ?? "application/octet-stream" });
    createReadStream(file).pipe(res);
  });
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise((ok) => server.close(() => ok())) };
}

/** Debian's Chromium, headless, with no network chatter. */
export function launch(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
}

export interface AppPage {
  page: Page;
  /** Uncaught page errors so far (a test asserts none). */
  errors: string[];
}

/** Opens the mocked app (query seeds settings) and waits until it is ready. */
export async function openApp(browser: Browser, base: string, query = "", ctx: BrowserContextOptions = {}): Promise<AppPage> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: "en-US", timezoneId: "Europe/Berlin", ...ctx });
  // Fail a wait well inside the test's own timeout, with Playwright's message.
  context.setDefaultTimeout(10_000);
  const page = await context.newPage();
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  await page.goto(`${base}/mock.html${query ? `?${query}` : ""}`);
  await page.waitForSelector('body[data-ready="1"]', { timeout: 15_000 });
  return { page, errors };
}

/**
 * One served mock page and one Chromium for the calling spec file, opened
 * before its tests and closed after them. Returns `openApp` on those two.
 */
export function useApp(): (query?: string, ctx?: BrowserContextOptions) => Promise<AppPage> {
  let server: Served | undefined;
  let browser: Browser | undefined;
  beforeAll(async () => {
    server = await serve();
    browser = await launch();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });
  return (query = "", ctx = {}) => {
    if (!server || !browser) throw new Error("useApp: the app is opened from a test, after beforeAll");
    return openApp(browser, server.url, query, ctx);
  };
}

export interface LoggedCall {
  cmd: string;
  args: Record<string, unknown>;
}

/** The fake backend's log of `cmd` calls. */
export function calls(page: Page, cmd: string): Promise<LoggedCall[]> {
  return page.evaluate((c) => window.__kairos.fake.calls.filter((x) => x.cmd === c), cmd);
}

/** Waits until `cmd` was called at least `n` times; returns the last call. */
export async function waitForCall(page: Page, cmd: string, n = 1): Promise<LoggedCall> {
  await page.waitForFunction(([c, k]) => window.__kairos.fake.calls.filter((x) => x.cmd === c).length >= (k as number), [cmd, n] as const, { timeout: 10_000 });
  const all = await calls(page, cmd);
  return all[all.length - 1] as LoggedCall;
}
