import type { ButtonHTMLAttributes } from "react";
import { cx } from "./cx";

/**
 * danger: the confirming button of a destructive dialog. danger-outline: a destructive action
 * offered beside others (a bulk Deny all), red without outshouting the primary one. A disabled
 * danger button is grey: red, even pale, still reads as "press me to destroy".
 */
type Variant = "primary" | "secondary" | "danger" | "danger-outline" | "ghost";
type Size = "sm" | "md";

const VARIANTS: Record<Variant, string> = {
  primary: "bg-brand-600 text-white hover:bg-brand-700 shadow-sm disabled:bg-brand-600/50",
  secondary: "bg-white text-slate-700 ring-1 ring-inset ring-slate-300 hover:bg-slate-50 shadow-sm disabled:text-slate-400",
  danger: "bg-red-600 text-white enabled:hover:bg-red-700 shadow-sm disabled:bg-slate-200 disabled:text-slate-500 disabled:shadow-none",
  "danger-outline":
    "bg-white text-red-700 ring-1 ring-inset ring-red-300 enabled:hover:bg-red-50 shadow-sm disabled:text-slate-400 disabled:ring-slate-300",
  ghost: "text-slate-600 hover:bg-slate-100 hover:text-slate-900 disabled:text-slate-300",
};
const SIZES: Record<Size, string> = {
  sm: "h-7 px-2.5 text-xs gap-1",
  md: "h-9 px-3.5 text-sm gap-1.5",
};

export interface ButtonProps extends ButtonHTMLAttributes<HTMLButtonElement> {
  variant?: Variant;
  size?: Size;
}

export function Button({ variant = "secondary", size = "md", className, type = "button", ...props }: ButtonProps) {
  return (
    <button
      type={type}
      className={cx(
        "inline-flex items-center justify-center rounded-md font-medium whitespace-nowrap transition-colors",
        "focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-brand-500 disabled:cursor-not-allowed",
        VARIANTS[variant],
        SIZES[size],
        className,
      )}
      {...props}
    />
  );
}
