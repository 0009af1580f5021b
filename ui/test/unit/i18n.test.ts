import { describe, expect, test } from "vitest";
import { resolveLang, setLang, t, TABLES } from "../../src/i18n";
import { en } from "../../src/i18n/en";

const placeholders = (s: string): string[] => [...s.matchAll(/\{(\w+)\}/g)].map((m) => m[1] ?? "").sort();

describe("zh-CN", () => {
  const zh = TABLES["zh-CN"];
  test("has every key en has, and no others", () => {
    expect(Object.keys(zh).sort()).toEqual(Object.keys(en).sort());
  });
  test("fills the same placeholders", () => {
    for (const k of Object.keys(en) as (keyof typeof en)[]) expect(placeholders(zh[k]), k).toEqual(placeholders(en[k]));
  });
  test("has no empty or untranslated-looking strings", () => {
    for (const [k, v] of Object.entries(zh)) expect(v.trim(), k).not.toBe("");
  });
});

describe("t and resolveLang", () => {
  test("fills placeholders and leaves unknown ones", () => {
    setLang("en");
    expect(t("cal.events", { n: 3 })).toBe("3 events");
    expect(t("cal.events")).toBe("{n} events");
    setLang("zh-CN");
    expect(t("tb.today")).toBe("今天");
    setLang("en");
  });
  test.each([
    ["auto", "zh-CN", "zh-CN"],
    ["auto", "zh-TW", "zh-CN"],
    ["auto", "de-DE", "en"],
    ["en", "zh-CN", "en"],
    ["zh-CN", "en-US", "zh-CN"],
  ])("%s on a %s system is %s", (setting, sys, want) => {
    expect(resolveLang(setting, sys)).toBe(want);
  });
});
