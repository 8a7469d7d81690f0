"use client";

import { useState } from "react";

/** Local text that follows the URL when it changes from outside (Back, a link). */
export function useSyncedText(urlValue: string): [string, (v: string) => void] {
  const [text, setText] = useState(urlValue);
  const [seen, setSeen] = useState(urlValue);
  if (seen !== urlValue) {
    setSeen(urlValue);
    setText(urlValue);
  }
  return [text, setText];
}
