"""Engines boot the kit's kernel and initramfs on a platform and capture the console."""
