/**
 * Strings in English and Simplified Chinese. `en` is the key set; the
 * compiler makes `zh-CN` give every key, and a unit test checks that the
 * `{placeholders}` agree.
 */
import { en } from "./en";
import { zhCN } from "./zh-CN";

export type Key = keyof typeof en;
export type Lang = "en" | "zh-CN";
export type Params = Record<string, string | number>;

export const TABLES: Record<Lang, Record<Key, string>> = { en, "zh-CN": zhCN };

let current: Lang = "en";

/** The language a setting (`auto`, `en`, `zh-CN`) means on this system. */
export function resolveLang(setting: string, systemLang: string): Lang {
  if (setting === "en" || setting === "zh-CN") return setting;
  return systemLang.toLowerCase().startsWith("zh") ? "zh-CN" : "en";
}

export function setLang(lang: Lang): void {
  current = lang;
  if (typeof document !== "undefined") document.documentElement.lang = lang;
}

export function lang(): Lang {
  return current;
}

/** The BCP 47 locale for dates: the system's when it is of the same language. */
export function locale(): string {
  const sys = typeof navigator === "undefined" ? "" : navigator.language;
  if (current === "zh-CN") return "zh-CN";
  return sys.toLowerCase().startsWith("en") ? sys : "en-US";
}

/** The string for `key` with `{name}` placeholders filled. */
export function t(key: Key, params?: Params): string {
  const s = TABLES[current][key] ?? en[key];
  if (!params) return s;
  return s.replace(/\{(\w+)\}/g, (m, name: string) => (name in params ? String(params[name]) : m));
}
