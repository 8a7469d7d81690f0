"use client";

import { Link } from "@/components/ui/link";
import { Shell } from "@/components/shell/shell";
import { EmptyState } from "@/components/ui/states";

/** An unknown address keeps the console's navigation, so the way back is one click (issue 10). */
export default function NotFound() {
  return (
    <Shell>
      <div data-testid="not-found">
        <EmptyState title="No page at this address">
          It may have been deleted, or the link is mistyped.{" "}
          <Link href="/" className="font-medium text-brand-700 hover:underline">
            Back to the overview
          </Link>
        </EmptyState>
      </div>
    </Shell>
  );
}
