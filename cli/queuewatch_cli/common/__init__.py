"""What more than one command uses: the stacks found by name, errors as one line, moments, plots, the template
as CloudFormation reads it, the command's registration."""
