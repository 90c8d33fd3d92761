// placeholder: filled in by its component
