/**
 * Light, dark or the system's choice: stored in localStorage, applied as the `dark` class on
 * <html>. THEME_SCRIPT runs inline before the first paint (app/layout.tsx), so a dark page
 * never flashes light; it also follows the system's preference while the choice is "system".
 */
export type ThemeChoice = "light" | "dark" | "system";

export const THEME_KEY = "drover-theme";

export const THEME_SCRIPT = `(function(){try{var k=${JSON.stringify(THEME_KEY)},m=window.matchMedia("(prefers-color-scheme: dark)");var a=function(){var t=localStorage.getItem(k);document.documentElement.classList.toggle("dark",t==="dark"||(t!=="light"&&m.matches));};a();m.addEventListener("change",a);window.addEventListener("storage",function(e){if(e.key===k)a();});}catch(e){}})();`;

export function readTheme(): ThemeChoice {
  try {
    const t = localStorage.getItem(THEME_KEY);
    return t === "light" || t === "dark" ? t : "system";
  } catch {
    return "system";
  }
}

const CHANGED = "drover-theme-change";

/** For useSyncExternalStore: a choice made here or in another tab. */
export function subscribeTheme(onChange: () => void): () => void {
  const onStorage = (e: StorageEvent) => e.key === THEME_KEY && onChange();
  window.addEventListener(CHANGED, onChange);
  window.addEventListener("storage", onStorage);
  return () => {
    window.removeEventListener(CHANGED, onChange);
    window.removeEventListener("storage", onStorage);
  };
}

export function applyTheme(choice: ThemeChoice): void {
  try {
    if (choice === "system") localStorage.removeItem(THEME_KEY);
    else localStorage.setItem(THEME_KEY, choice);
  } catch {
    // Storage refused (private mode): the choice lasts until the page is left.
  }
  const dark = choice === "dark" || (choice === "system" && window.matchMedia("(prefers-color-scheme: dark)").matches);
  document.documentElement.classList.toggle("dark", dark);
  window.dispatchEvent(new Event(CHANGED));
}
