/** localStorage key of the chosen theme ("light" | "dark"); absent = follow the operating system. */
export const THEME_STORAGE_KEY = "onceboard-theme";

/**
 * Runs in <head> before the first paint, so a stored choice never flashes the other theme.
 * Without a stored choice, CSS follows prefers-color-scheme on its own.
 */
export const THEME_SCRIPT = `(function(){try{var t=localStorage.getItem(${JSON.stringify(THEME_STORAGE_KEY)});if(t==="light"||t==="dark")document.documentElement.setAttribute("data-theme",t)}catch(e){}})()`;
